// Fakes of Google's two token sources, checking what Google checks and issuing opaque tokens that expire:
// - the OAuth2 token endpoint (https, served as oauth2.googleapis.com through redirect-https.ts): a JWT-bearer grant
//   whose assertion must be an RS256 JWT signed by the service account's private key (verified with its public key),
//   issued by its client_email, for the token URL, with the requested scope and a current iat/exp;
// - the GCE/GKE metadata server (plain http, found through GCE_METADATA_HOST): the Metadata-Flavor header required.
// `valid(token)` tells the fake Vertex endpoint whether a token was issued here and has not expired.
import { randomBytes, verify } from 'node:crypto';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { TestCert } from '../support/tls-cert.js';
import { listenOnLoopback } from './loopback.js';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export interface GoogleTokenServer {
  readonly port: number;
  /** Grants issued, and grants refused with why. */
  /** `key`: which of the service account's public keys verified the grant (0: publicKeyPem, then morePublicKeyPems). */
  readonly issued: Array<{ token: string; expiresAt: number; via: 'jwt' | 'metadata'; scope: string; key?: number | undefined }>;
  readonly refusals: string[];
  valid(token: string): boolean;
  /** Lifetime of the next tokens (default 3600 s). */
  lifetimeSeconds: number;
  /** How the OAuth2 endpoint misbehaves: never answering a grant, or answering without expires_in. */
  fault: 'silent' | 'no-expires-in' | undefined;
  /** Grants received, answered or not. */
  readonly grants: number;
  close(): Promise<void>;
}

interface Options {
  /** The service account the JWT grant accepts. */
  readonly serviceAccount?: { readonly email: string; readonly publicKeyPem: string; readonly morePublicKeyPems?: readonly string[] };
  /** TLS for the OAuth2 endpoint; without it, the server is the (plain http) metadata server. */
  readonly tls?: TestCert;
}

export async function startGoogleTokenServer(o: Options): Promise<GoogleTokenServer> {
  const issued: GoogleTokenServer['issued'] = [];
  const refusals: string[] = [];
  const state: { lifetimeSeconds: number; fault: GoogleTokenServer['fault']; grants: number } = { lifetimeSeconds: 3600, fault: undefined, grants: 0 };
  const issue = (via: 'jwt' | 'metadata', scope: string, key?: number) => {
    const token = `ya29.fake-${randomBytes(12).toString('hex')}`;
    issued.push({ token, expiresAt: Date.now() + state.lifetimeSeconds * 1000, via, scope, key });
    if (state.fault === 'no-expires-in') return { access_token: token, token_type: 'Bearer' };
    return { access_token: token, expires_in: state.lifetimeSeconds, token_type: 'Bearer' };
  };
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (o.tls) {
      if (req.method !== 'POST' || url.pathname !== '/token') return send(404, { error: 'not_found' });
      state.grants++;
      if (state.fault === 'silent') return; // the connection stays open, unanswered
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const why = checkJwtGrant(form, o.serviceAccount);
      if (why) {
        refusals.push(why);
        return send(400, { error: 'invalid_grant', error_description: why });
      }
      const scope = (JSON.parse(Buffer.from(form.get('assertion')!.split('.')[1]!, 'base64url').toString('utf8')) as { scope: string }).scope;
      return send(200, issue('jwt', scope, signingKey(form.get('assertion')!, publicKeys(o.serviceAccount))));
    }
    // The metadata server: every answer carries Metadata-Flavor: Google, every request must.
    const flavor = { 'metadata-flavor': 'Google' };
    if (req.headers['metadata-flavor'] !== 'Google') {
      refusals.push('metadata request without Metadata-Flavor: Google');
      return send(403, 'Missing Metadata-Flavor header', flavor);
    }
    if (url.pathname === '/computeMetadata/v1/instance/service-accounts/default/token')
      return send(200, issue('metadata', url.searchParams.get('scopes') ?? ''), flavor);
    if (url.pathname === '/computeMetadata/v1/project/project-id') return send(200, 'my-project', { ...flavor, 'content-type': 'text/plain' });
    if (url.pathname.startsWith('/computeMetadata/v1/universe')) return send(200, 'googleapis.com', { ...flavor, 'content-type': 'text/plain' });
    if (url.pathname.startsWith('/computeMetadata/v1')) return send(200, {}, flavor);
    return send(404, 'not found', flavor);
  };
  const server: Server = o.tls ? createHttps({ key: o.tls.key, cert: o.tls.cert }, handler) : createHttp(handler);
  const loop = await listenOnLoopback(server);
  return {
    port: loop.port,
    issued,
    refusals,
    valid: (token) => issued.some((t) => t.token === token && t.expiresAt > Date.now()),
    get lifetimeSeconds() {
      return state.lifetimeSeconds;
    },
    set lifetimeSeconds(v: number) {
      state.lifetimeSeconds = v;
    },
    get fault() {
      return state.fault;
    },
    set fault(v: GoogleTokenServer['fault']) {
      state.fault = v;
    },
    get grants() {
      return state.grants;
    },
    close: loop.close,
  };
}

/** Why Google would refuse this JWT-bearer grant, or undefined. */
/** A service account may hold several keys at once (a rotation). */
function publicKeys(sa: Options['serviceAccount']): string[] {
  return sa ? [sa.publicKeyPem, ...(sa.morePublicKeyPems ?? [])] : [];
}

/** Which of the keys signed this JWT, -1 for none. */
function signingKey(jwt: string, keys: readonly string[]): number {
  const [h, p, sig] = jwt.split('.') as [string, string, string];
  return keys.findIndex((k) => verify('RSA-SHA256', Buffer.from(`${h}.${p}`), k, Buffer.from(sig ?? '', 'base64url')));
}

function checkJwtGrant(form: URLSearchParams, sa: Options['serviceAccount']): string | undefined {
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return 'wrong grant_type';
  const parts = (form.get('assertion') ?? '').split('.');
  if (parts.length !== 3) return 'assertion is not a JWT';
  const [h, p, sig] = parts as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
  if (header.alg !== 'RS256') return `alg ${header.alg}`;
  if (!sa || signingKey(`${h}.${p}.${sig}`, publicKeys(sa)) < 0) return 'Invalid JWT Signature.';
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number };
  const now = Date.now() / 1000;
  if (claims.iss !== sa.email) return `iss ${claims.iss}`;
  if (claims.aud !== GOOGLE_TOKEN_URL) return `aud ${claims.aud}`;
  if (!claims.scope) return 'no scope';
  if (claims.iat === undefined || claims.exp === undefined || claims.iat > now + 60 || claims.exp < now || claims.exp - claims.iat > 3600) return 'bad iat/exp';
  return undefined;
}
