// A gateway behind an egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY), the way a cluster without direct internet
// access runs it: Google's token endpoint and an upstream are reachable under their public names only through the
// fake proxy (test/fakes/egress-proxy.ts), which records what it carried; NO_PROXY sends an origin around it.
// (Entra through HTTPS_PROXY: azure-ad.test.ts.)
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEgressProxy } from '../fakes/egress-proxy.js';
import { startGoogleTokenServer } from '../fakes/google-token-server.js';
import { type ProviderRequest, startProviderUpstream } from '../fakes/provider-upstream.js';
import { startGateway } from '../helpers/gateway.js';
import { selfSignedCert, type TestCert, trustCert } from '../support/tls-cert.js';
import { clientManifests } from './recipe-setup.js';

const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy'];
const savedEnv = Object.fromEntries(PROXY_ENV.map((k) => [k, process.env[k]]));
const UPSTREAM_KEY = 'sk-behind-the-proxy-0123456789';
/** An upstream name that resolves nowhere: reached only through the proxy. */
const VLLM = 'vllm.ml.example:8000';

let cert: TestCert;
let untrust: () => void;
let open: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  cert = selfSignedCert(['oauth2.googleapis.com']);
  untrust = trustCert(cert.cert);
});
afterAll(() => untrust());
beforeEach(() => {
  for (const k of PROXY_ENV) delete process.env[k];
});
afterEach(async () => {
  for (const o of open.reverse()) await o.close();
  open = [];
  for (const k of PROXY_ENV) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
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
