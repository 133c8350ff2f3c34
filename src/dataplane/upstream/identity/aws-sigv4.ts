// awsSigV4: every request signed with AWS Signature Version 4 by the maintained signer (@smithy/signature-v4, the
// AWS SDK's own), the body's SHA-256 included (x-amz-content-sha256). Credentials: keys from a Secret, or the pod's
// identity through the AWS SDK's default chain (environment, IRSA web identity token file, EKS Pod Identity,
// instance metadata), which caches and renews them before they expire.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { NodeHttpHandler } from '@smithy/node-http-handler';
import type { IdentityAuth } from '../../../model/backend-auth.js';
import { nodeProxyEnv, proxyConfigured } from '../egress/egress-proxy.js';
import type { AddedSecret, Identity, SignableRequest } from './signed-request.js';

type AwsAuth = Extract<IdentityAuth, { kind: 'awsSigV4' }>;

interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}
type AwsCredentialIdentityProvider = () => Promise<AwsCredentials>;

interface Signer {
  sign(request: unknown): Promise<{ headers: Record<string, string> }>;
}

export class AwsSigV4Identity implements Identity {
  readonly #auth: AwsAuth;
  #signer: Promise<{ signer: Signer; credentials: AwsCredentialIdentityProvider }> | undefined;

  constructor(auth: AwsAuth) {
    this.#auth = auth;
  }

  async warm(): Promise<void> {
    const { credentials } = await this.#load();
    await credentials();
  }

  async authorize(req: SignableRequest): Promise<readonly AddedSecret[]> {
    const { signer } = await this.#load();
    const url = new URL(req.path, req.origin);
    // The query as the signer canonicalizes it, and the same query on the wire: one encoding for both.
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of url.searchParams) {
      const had = query[k];
      query[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    headers['host'] = url.host;
    const signed = await signer.sign({
      method: req.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      // As it goes on the wire (percent-encoded); the signer encodes each segment once more, as AWS does for
      // every service but S3.
      path: url.pathname,
      query,
      headers,
      body: req.body ?? undefined,
    });
    for (const [k, v] of Object.entries(signed.headers)) req.headers[k.toLowerCase()] = v;
    req.path = url.pathname + canonicalQueryString(query);
    const token = signed.headers['x-amz-security-token'];
    return token ? [{ header: 'x-amz-security-token', value: token, secret: token }] : [];
  }

  #load(): Promise<{ signer: Signer; credentials: AwsCredentialIdentityProvider }> {
    // Loaded on first use: a gateway that signs nothing never pays for the AWS SDK.
    this.#signer ??= (async () => {
      const [{ SignatureV4 }, { Hash }] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]);
      const keys = this.#auth.keys;
      const credentials: AwsCredentialIdentityProvider = keys
        ? async () => keys
        : (await import('@aws-sdk/credential-providers')).fromNodeProviderChain(await chainOptions());
      const signer = new SignatureV4({ credentials, region: this.#auth.region, service: this.#auth.service, sha256: Hash.bind(null, 'sha256') });
      return { signer: signer as unknown as Signer, credentials };
    })();
    this.#signer.catch(() => {
      this.#signer = undefined;
    });
    return this.#signer;
  }
}

/**
 * The chain's AWS API calls (STS for IRSA and assumed roles, SSO) through the egress proxy, since the SDK's clients
 * read no proxy variables. The container (Pod Identity) and instance-metadata providers never use this handler.
 */
async function chainOptions(): Promise<{ clientConfig?: { requestHandler: NodeHttpHandler } }> {
  if (!proxyConfigured()) return {};
  const proxyEnv = nodeProxyEnv();
  const handler = new (await import('@smithy/node-http-handler')).NodeHttpHandler({
    httpAgent: new HttpAgent({ proxyEnv }),
    httpsAgent: new HttpsAgent({ proxyEnv }),
  });
  return { clientConfig: { requestHandler: handler } };
}

/** RFC 3986 encoding, as SigV4 canonicalizes: everything but unreserved characters percent-encoded. */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQueryString(query: Record<string, string | string[]>): string {
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) pairs.push(`${rfc3986(k)}=${rfc3986(one)}`);
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}
