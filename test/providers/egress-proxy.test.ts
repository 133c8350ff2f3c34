// A gateway behind an egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY), the way a cluster without direct internet
// access runs it: Google's token endpoint, AWS STS and an upstream are reachable under their public names only
// through the fake proxy (test/fakes/egress-proxy.ts), which records what it carried; NO_PROXY sends an origin
// around it. (Entra through HTTPS_PROXY: azure-ad.test.ts.)
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEgressProxy } from '../fakes/egress-proxy.js';
import { startGoogleTokenServer } from '../fakes/google-token-server.js';
import { type ProviderRequest, startProviderUpstream } from '../fakes/provider-upstream.js';
import { verifySigV4 } from '../fakes/sigv4-verifier.js';
import { startFakeSts } from '../fakes/sts-server.js';
import { startGateway } from '../helpers/gateway.js';
import { selfSignedCert, type TestCert, trustCert } from '../support/tls-cert.js';
import { clientManifests } from './recipe-setup.js';
import { hermeticEnv } from '../support/hermetic-env.js';

const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy'];
/** Every variable the AWS SDK's chain reads for its sources, region and STS endpoint: unset but for what a test sets. */
const AWS_ENV = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_ROLE_ARN',
  'AWS_ROLE_SESSION_NAME',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_STS',
  'AWS_STS_REGIONAL_ENDPOINTS',
  'AWS_USE_FIPS_ENDPOINT',
  'AWS_USE_DUALSTACK_ENDPOINT',
];
const ENV = [...PROXY_ENV, ...AWS_ENV];
const UPSTREAM_KEY = 'sk-behind-the-proxy-0123456789';
/** An upstream name that resolves nowhere: reached only through the proxy. */
const VLLM = 'vllm.ml.example:8000';

const STS = 'sts.eu-west-1.amazonaws.com';

let cert: TestCert;
let untrust: () => void;
let tmp: string;
let open: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  cert = selfSignedCert(['oauth2.googleapis.com', STS]);
  untrust = trustCert(cert.cert);
  tmp = mkdtempSync(join(tmpdir(), 'mg-egress-'));
});
afterAll(() => {
  untrust();
  rmSync(tmp, { recursive: true, force: true });
});
// Hermetic: no proxy or AWS setting of the machine leaks in.
hermeticEnv(ENV);
afterEach(async () => {
  for (const o of open.reverse()) await o.close();
  open = [];
});

async function started<T extends { close(): Promise<void> }>(p: Promise<T>): Promise<T> {
  const t = await p;
  open.push(t);
  return t;
}

const route = (name: string, baseURL: string, auth: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${name}
  backends:
    - {name: b, baseURL: "${baseURL}", auth: ${auth}}
---`;
const keyed = (r: ProviderRequest) => (r.headers.authorization === `Bearer ${UPSTREAM_KEY}` ? undefined : 'wrong key');
const upstreamSecret = `
apiVersion: v1
kind: Secret
metadata: {name: upstream}
stringData: {apiKey: ${UPSTREAM_KEY}}
---`;
const BEARER = '{bearer: {secretRef: {name: upstream, key: apiKey}}}';

describe('behind an egress proxy', () => {
  it('Google tokens are fetched through HTTPS_PROXY (a CONNECT tunnel to oauth2.googleapis.com)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = 'gateway@my-project.iam.gserviceaccount.com';
    const oauth = await started(
      startGoogleTokenServer({ tls: cert, serviceAccount: { email, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() } }),
    );
    const proxy = await started(startEgressProxy({ 'oauth2.googleapis.com:443': oauth.port }));
    process.env['HTTPS_PROXY'] = proxy.url;
    const vertex = await started(
      startProviderUpstream((r) => (oauth.valid(/^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1] ?? '') ? undefined : 'not live')),
    );
    const key = JSON.stringify({ type: 'service_account', client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });
    const gw = await started(
      startGateway(
        `apiVersion: v1\nkind: Secret\nmetadata: {name: sa}\nstringData:\n  key.json: '${key}'\n---${route('gemini', `${vertex.origin}/v1`, '{gcp: {secretRef: {name: sa, key: key.json}}}')}\n${clientManifests()}`,
      ),
    );
    const res = await gw.client().chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    expect(oauth.issued).toHaveLength(1);
    expect(proxy.seen).toContain('oauth2.googleapis.com:443');
    // The http upstream is not proxied: HTTPS_PROXY is for https origins only.
    expect(proxy.seen.every((s) => s === 'oauth2.googleapis.com:443')).toBe(true);
    expect(vertex.refused).toEqual([]);
  });

  // IRSA: the chain trades the projected service-account token for temporary keys at STS. HTTP_PROXY alone serves
  // https too, as for every other egress (node's own agent would not use it for https).
  it.each(['HTTPS_PROXY', 'HTTP_PROXY'])('AWS credentials (IRSA: STS AssumeRoleWithWebIdentity) are fetched through %s', async (variable) => {
    const roleArn = 'arn:aws:iam::123456789012:role/model-gateway';
    const webIdentityToken = `eyJhbGciOiJSUzI1NiJ9.projected-service-account-token.${Date.now().toString(36)}`;
    const tokenFile = join(tmp, 'aws-web-identity-token');
    writeFileSync(tokenFile, webIdentityToken);
    const sts = await started(startFakeSts({ tls: cert, roles: { [roleArn]: webIdentityToken } }));
    const proxy = await started(startEgressProxy({ [`${STS}:443`]: sts.port }));
    // What the EKS webhook injects for a service account annotated with a role; no keys, no files, no IMDS.
    Object.assign(process.env, {
      [variable]: proxy.url,
      NO_PROXY: 'localhost,127.0.0.1',
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_ROLE_ARN: roleArn,
      AWS_REGION: 'eu-west-1',
      AWS_CONFIG_FILE: join(tmp, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(tmp, 'no-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const bedrock = await started(
      startProviderUpstream((r) => {
        const v = verifySigV4({ method: r.method, path: r.url, headers: r.headersDistinct, body: r.body }, (id) => sts.credentials(id));
        return v.ok ? undefined : v.reason;
      }),
    );
    const gw = await started(
      startGateway(`${route('gpt-oss', `${bedrock.origin}/openai/v1`, '{awsSigV4: {region: eu-west-1, service: bedrock}}')}\n${clientManifests()}`),
    );
    const res = await gw.client().chat.completions.create({ model: 'gpt-oss', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    expect(sts.refusals).toEqual([]);
    expect(sts.issued).toHaveLength(1);
    expect(sts.issued[0]).toMatchObject({ host: STS, roleArn });
    expect(bedrock.refused).toEqual([]);
    expect(bedrock.requests[0]?.headers['x-amz-security-token']).toBe(sts.issued[0]?.sessionToken);
    // STS went through the proxy, the loopback upstream (in NO_PROXY) did not.
    expect(proxy.seen).toEqual([`${STS}:443`]);
    expect(gw.logText()).not.toContain(sts.issued[0]?.secretAccessKey);
  });

  it('EKS Pod Identity: the container-credential endpoint is reached directly, even when NO_PROXY omits it', async () => {
    const creds = { accessKeyId: 'ASIAPODIDENTITY00002', secretAccessKey: 'pod/identity/secret/abcdefghij0123456789', sessionToken: 'pod-session-2' };
    // The Pod Identity agent (169.254.170.23 in a pod) on loopback. The SDK's container provider makes its own
    // requests, not through the chain's clientConfig; the proxy would refuse it (no route).
    let asked = 0;
    const agent = createServer((_req, res) => {
      asked++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const expiration = new Date(Date.now() + 3_600_000).toISOString();
      res.end(JSON.stringify({ AccessKeyId: creds.accessKeyId, SecretAccessKey: creds.secretAccessKey, Token: creds.sessionToken, Expiration: expiration }));
    });
    agent.listen(0, '127.0.0.1');
    await once(agent, 'listening');
    open.push({ close: () => new Promise<void>((r) => agent.close(() => r())) });
    const bedrock = await started(
      startProviderUpstream((r) => {
        const v = verifySigV4({ method: r.method, path: r.url, headers: r.headersDistinct, body: r.body }, (id) =>
          id === creds.accessKeyId ? creds : undefined,
        );
        return v.ok ? undefined : v.reason;
      }),
    );
    // The upstream goes through the proxy like any http origin not in NO_PROXY.
    const bedrockHost = new URL(bedrock.origin).host;
    const proxy = await started(startEgressProxy({ [bedrockHost]: Number(new URL(bedrock.origin).port) }));
    Object.assign(process.env, {
      HTTP_PROXY: proxy.url,
      HTTPS_PROXY: proxy.url,
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${(agent.address() as AddressInfo).port}/v1/credentials`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN: 'pod-sa-token',
      AWS_CONFIG_FILE: join(tmp, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(tmp, 'no-credentials'),
    });
    const gw = await started(startGateway(`${route('gpt-oss', `${bedrock.origin}/openai/v1`, '{awsSigV4: {region: eu-west-1}}')}\n${clientManifests()}`));
    const res = await gw.client().chat.completions.create({ model: 'gpt-oss', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    expect(asked).toBe(1);
    expect(bedrock.refused).toEqual([]);
    expect(proxy.seen).toEqual([bedrockHost]);
  });

  it('upstream calls go through HTTP_PROXY, JSON and streamed', async () => {
    const vllm = await started(startProviderUpstream(keyed));
    const proxy = await started(startEgressProxy({ [VLLM]: Number(new URL(vllm.origin).port) }));
    process.env['HTTP_PROXY'] = proxy.url;
    const gw = await started(startGateway(`${upstreamSecret}${route('llama', `http://${VLLM}/v1`, BEARER)}\n${clientManifests()}`));
    const client = gw.client();
    const json = await client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] });
    expect(json.choices[0]?.message.content).toBe('Hello there');
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }], stream: true }))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello there');
    expect(vllm.requests.map((r) => r.pathname)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(vllm.refused).toEqual([]);
    expect(proxy.seen).toEqual([VLLM, VLLM]);
  });

  it('NO_PROXY: a listed origin is reached directly while the others still go through the proxy', async () => {
    const vllm = await started(startProviderUpstream(keyed));
    const local = await started(startProviderUpstream(keyed));
    const proxy = await started(startEgressProxy({ [VLLM]: Number(new URL(vllm.origin).port) }));
    process.env['HTTP_PROXY'] = proxy.url;
    process.env['NO_PROXY'] = 'localhost,127.0.0.1';
    const gw = await started(
      startGateway(`${upstreamSecret}${route('llama', `http://${VLLM}/v1`, BEARER)}${route('local', `${local.origin}/v1`, BEARER)}\n${clientManifests()}`),
    );
    const client = gw.client();
    for (const model of ['local', 'llama', 'local']) {
      const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.choices[0]?.message.content).toBe('Hello there');
    }
    expect(local.requests).toHaveLength(2);
    expect(vllm.requests).toHaveLength(1);
    expect(proxy.seen).toEqual([VLLM]); // the local origin never went through it
  });
});
