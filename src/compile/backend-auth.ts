// spec.backends[].auth / apiKeySecretRef / headers / query → the compiled BackendAuth and params, Secret values
// resolved. Pure: Secrets are looked up through `resolve`; the first unresolved reference is reported (by name,
// never by value) and the backend is left out of the table, as with any other unresolved reference.
import { sha256Hex } from '../model/digest.js';
import type { AwsKeys, BackendAuth, BackendParam } from '../model/backend-auth.js';
import type { BackendAuthSpec, SecretKeyRef } from './resources.js';

export type Resolved = { ok: true; value: string | undefined } | { ok: false; reason: 'SecretNotFound' | 'SecretKeyNotFound'; message: string };

interface ParamSpec {
  readonly name: string;
  readonly value?: string | undefined;
  readonly secretRef?: SecretKeyRef | undefined;
}

export interface BackendAccessSpec {
  readonly baseURL: string;
  readonly apiKeySecretRef?: SecretKeyRef | undefined;
  readonly auth?: BackendAuthSpec | undefined;
  readonly headers?: readonly ParamSpec[] | undefined;
  readonly query?: readonly ParamSpec[] | undefined;
}

interface BackendAccess {
  readonly auth: BackendAuth;
  readonly headers: readonly BackendParam[];
  readonly query: readonly BackendParam[];
  /** Same value for two backends that reach the same upstream with the same credential (sha256, never shown). */
  readonly account: string;
}

export type AccessResult = { ok: true; access: BackendAccess } | { ok: false; reason: 'SecretNotFound' | 'SecretKeyNotFound' | 'InvalidSpec'; message: string };

const DEFAULT_GCP_SCOPES = ['https://www.googleapis.com/auth/cloud-platform'];

class Unresolved extends Error {
  constructor(readonly result: Extract<AccessResult, { ok: false }>) {
    super(result.message);
  }
}

export function compileBackendAccess(b: BackendAccessSpec, resolve: (ref: SecretKeyRef) => Resolved): AccessResult {
  // A key read from a file often ends in a newline, which no header or query value may carry.
  const secret = (ref: SecretKeyRef): string => {
    const r = resolve(ref);
    if (!r.ok) throw new Unresolved(r);
    return (r.value ?? '').trim();
  };
  const optional = (ref: SecretKeyRef): string | undefined => {
    const r = resolve(ref);
    if (!r.ok) {
      if (r.reason === 'SecretKeyNotFound') return undefined;
      throw new Unresolved(r);
    }
    return r.value?.trim();
  };
  try {
    const auth = compileAuth(b, secret, optional);
    const headers = (b.headers ?? []).map((h) => param(h.name.toLowerCase(), h, secret));
    const query = (b.query ?? []).map((q) => param(q.name, q, secret));
    if (auth.kind === 'gcp' && auth.serviceAccountKey !== undefined && !isServiceAccountKey(auth.serviceAccountKey))
      return { ok: false, reason: 'InvalidSpec', message: 'the gcp secretRef does not hold a service account JSON key (client_email, private_key)' };
    if (auth.kind === 'gcp' && auth.serviceAccountKey !== undefined && !httpsTokenUri(auth.serviceAccountKey))
      return { ok: false, reason: 'InvalidSpec', message: "the gcp service account key's token_uri is not an https URL" };
    const clash = authHeader(auth);
    if (clash !== undefined && headers.some((h) => h.name === clash))
      return { ok: false, reason: 'InvalidSpec', message: `header "${clash}" is the backend's credential header; set it through auth only` };
    if (auth.kind === 'query' && query.some((q) => q.name === auth.param))
      return { ok: false, reason: 'InvalidSpec', message: `query parameter "${auth.param}" is the backend's credential; set it through auth only` };
    return { ok: true, access: { auth, headers, query, account: sha256Hex(JSON.stringify([b.baseURL, auth, headers, query])) } };
  } catch (err) {
    if (err instanceof Unresolved) return err.result;
    throw err;
  }
}

function param(name: string, p: ParamSpec, secret: (ref: SecretKeyRef) => string): BackendParam {
  return p.secretRef ? { name, value: secret(p.secretRef), secret: true } : { name, value: p.value ?? '', secret: false };
}

function compileAuth(b: BackendAccessSpec, secret: (ref: SecretKeyRef) => string, optional: (ref: SecretKeyRef) => string | undefined): BackendAuth {
  const a = b.auth;
  if (a === undefined) return b.apiKeySecretRef ? { kind: 'bearer', key: secret(b.apiKeySecretRef) } : { kind: 'none' };
  if (a.bearer) return { kind: 'bearer', key: secret(a.bearer.secretRef) };
  if (a.header) return { kind: 'header', header: a.header.name.toLowerCase(), key: secret(a.header.secretRef) };
  if (a.query) return { kind: 'query', param: a.query.name, key: secret(a.query.secretRef) };
  if (a.awsSigV4) {
    const ref = a.awsSigV4.secretRef;
    const keys: AwsKeys | undefined = ref
      ? {
          accessKeyId: secret({ name: ref.name, key: 'AWS_ACCESS_KEY_ID' }),
          secretAccessKey: secret({ name: ref.name, key: 'AWS_SECRET_ACCESS_KEY' }),
          sessionToken: optional({ name: ref.name, key: 'AWS_SESSION_TOKEN' }) || undefined,
        }
      : undefined;
    return { kind: 'awsSigV4', region: a.awsSigV4.region, service: a.awsSigV4.service, keys };
  }
  if (a.gcp)
    return {
      kind: 'gcp',
      serviceAccountKey: a.gcp.secretRef ? secret(a.gcp.secretRef) : undefined,
      scopes: a.gcp.scopes ?? DEFAULT_GCP_SCOPES,
    };
  if (a.azureAD)
    return {
      kind: 'azureAD',
      tenantId: a.azureAD.tenantId,
      clientId: a.azureAD.clientId,
      clientSecret: a.azureAD.secretRef ? secret(a.azureAD.secretRef) : undefined,
      scope: a.azureAD.scope,
      authorityHost: a.azureAD.authorityHost?.replace(/\/$/, ''),
    };
  return { kind: 'none' };
}

/** The request header a credential occupies, if it is a header. */
function authHeader(auth: BackendAuth): string | undefined {
  switch (auth.kind) {
    case 'bearer':
    case 'gcp':
    case 'azureAD':
    case 'awsSigV4':
      return 'authorization';
    case 'header':
      return auth.header;
    default:
      return undefined;
  }
}

/** Whether a Secret's value looks like a service account's JSON key (checked without ever quoting it). */
function isServiceAccountKey(json: string): boolean {
  if (json === '') return true; // a Secret assumed present by an offline check
  try {
    const key = JSON.parse(json) as Record<string, unknown>;
    return typeof key === 'object' && key !== null && typeof key['client_email'] === 'string' && typeof key['private_key'] === 'string';
  } catch {
    return false;
  }
}

/** A key's token_uri, where its signed grants go, must be https when present (a grant is as good as a token). */
function httpsTokenUri(json: string): boolean {
  if (json === '') return true;
  const uri = (JSON.parse(json) as Record<string, unknown>)['token_uri'];
  if (uri === undefined) return true;
  return typeof uri === 'string' && URL.canParse(uri) && new URL(uri).protocol === 'https:';
}
