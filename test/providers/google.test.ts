// gcp: Google access tokens for Vertex AI, from a service account's JSON key (a JWT signed with its key, exchanged at
// Google's token endpoint, served here as oauth2.googleapis.com over TLS on loopback) or from the metadata server
// (GKE Workload Identity). Tokens that live a few seconds: no request reaches the provider with an expired token,
// tokens are renewed ahead of expiry and not per request, concurrent requests share one; a refused grant gives the
// client a 502 naming the backend and keeps Google's reason for the route's status, with no key material anywhere.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type GoogleTokenServer, startGoogleTokenServer } from '../fakes/google-token-server.js';
import { type ProviderRequest, startProviderUpstream } from '../fakes/provider-upstream.js';
import { ALICE_KEY, startGateway } from '../helpers/gateway.js';
import { redirectHttps } from '../support/redirect-https.js';
import { selfSignedCert } from '../support/tls-cert.js';
import { eventually, waitUntil } from '../support/wait.js';
import { clientManifests } from './recipe-setup.js';

const CLIENT = `\n${clientManifests()}\n`;

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
const EMAIL = 'gateway@my-project.iam.gserviceaccount.com';
const account = keyPair();
/** The key the account's key is rotated to (Google holds both until the old one is deleted). */
const rotated = keyPair();
const serviceAccountKey = (privateKeyPem: string, more: Record<string, string> = {}) =>
  JSON.stringify({ type: 'service_account', client_email: EMAIL, private_key: privateKeyPem, private_key_id: 'k1', ...more });

const vertexRoute = (origin: string, auth: string, secret?: string) => `
${secret === undefined ? '' : `apiVersion: v1\nkind: Secret\nmetadata: {name: vertex-sa}\nstringData:\n  key.json: '${secret}'\n---`}
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: vertex}
spec:
  model: gemini
  backends:
    - {name: vertex, baseURL: "${origin}/v1/projects/p/locations/us-central1/endpoints/openapi", model: google/gemini-2.5-flash, auth: ${auth}}
---${CLIENT}`;

/** A token endpoint other than Google's public one (Private Service Connect), named by a key's token_uri. */
const PSC_HOST = 'oauth2-gateway.p.googleapis.com';

let oauth: GoogleTokenServer;
let psc: GoogleTokenServer;
let undoRedirect: () => void;
beforeAll(async () => {
  const cert = selfSignedCert(['oauth2.googleapis.com', PSC_HOST]);
  const serviceAccount = { email: EMAIL, publicKeyPem: account.publicKeyPem, morePublicKeyPems: [rotated.publicKeyPem] };
  oauth = await startGoogleTokenServer({ tls: cert, serviceAccount });
  psc = await startGoogleTokenServer({ tls: cert, serviceAccount });
  undoRedirect = redirectHttps({ 'oauth2.googleapis.com': oauth.port, [PSC_HOST]: psc.port }, cert.cert);
});
afterAll(async () => {
  undoRedirect();
  await oauth.close();
  await psc.close();
});

/** The fake Vertex: a Bearer token must be one Google issued and still live when the request arrives. */
const liveToken = (server: () => GoogleTokenServer) => (r: ProviderRequest) => {
  const token = /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1] ?? '';
  return server().valid(token) ? undefined : `token ${token.slice(0, 14)}… is not live`;
};

const chat = (baseURL: string) =>
  fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini', messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('gcp: Google access tokens', () => {
  afterEach(() => {
    oauth.lifetimeSeconds = 3600;
    oauth.fault = undefined;
  });

  it('renews short-lived tokens ahead of expiry: none expired on arrival, shared, not fetched per request', async () => {
    oauth.lifetimeSeconds = 3; // renewed from 1.5 s on, never used after 2.7 s
    const before = oauth.issued.length;
    // The token lifetimes pass on a clock the test moves on: Date alone is faked (it also runs with real time;
    // timers and I/O are real), and the gateway's token cache, Google's library (the expiry it computes and the
    // JWT it signs) and the fake token endpoint all read it, so the 150 ms between requests pass without waiting.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const vertex = await startProviderUpstream(liveToken(() => oauth));
    const gw = await startGateway(vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', serviceAccountKey(account.privateKeyPem)));
    try {
      // Twenty concurrent first requests: one token between them (the fetch the table load started included).
      const first = await Promise.all(Array.from({ length: 20 }, () => chat(gw.baseURL)));
      expect(first.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(oauth.issued.length - before).toBe(1);
      // Then a request every 150 ms for 7 s: more than two lifetimes.
      const started = Date.now();
      let n = 0;
      while (Date.now() - started < 7_000) {
        expect((await chat(gw.baseURL)).status).toBe(200);
        n++;
        vi.advanceTimersByTime(150);
      }
      expect(vertex.refused).toEqual([]); // every request carried a live token
      const issued = oauth.issued.length - before;
      expect(issued).toBeGreaterThanOrEqual(3); // renewed …
      expect(issued).toBeLessThan(n / 3); // … but not per request
      expect(oauth.issued.slice(before).every((t) => t.via === 'jwt' && t.scope === 'https://www.googleapis.com/auth/cloud-platform')).toBe(true);
      for (const t of oauth.issued) expect(gw.logText()).not.toContain(t.token);
    } finally {
      await gw.close();
      await vertex.close();
      vi.useRealTimers();
    }
  }, 20_000);

  it('backends with one service account key share one token, whatever their base URLs and headers', async () => {
    const before = oauth.issued.length;
    const vertex = await startProviderUpstream(liveToken(() => oauth));
    const auth = '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}';
    // Three routes, each backend with its own base URL and headers, all with the same key.
    const routes = ['us-central1', 'europe-west4', 'asia-east1'].map(
      (region, i) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: vertex-${i}}
spec:
  model: gemini-${i}
  backends:
    - name: vertex
      baseURL: "${vertex.origin}/v1/projects/p/locations/${region}/endpoints/openapi"
      model: google/gemini-2.5-flash
      auth: ${auth}
      headers: [{name: x-goog-user-project, value: project-${i}}]
---`,
    );
    const key = serviceAccountKey(account.privateKeyPem);
    const gw = await startGateway(
      `apiVersion: v1\nkind: Secret\nmetadata: {name: vertex-sa}\nstringData:\n  key.json: '${key}'\n---${routes.join('')}${CLIENT}`,
    );
    try {
      for (const model of ['gemini-0', 'gemini-1', 'gemini-2']) {
        const res = await gw.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
        expect(res.choices[0]?.message.content).toBe('Hello there');
      }
      expect(vertex.requests.map((r) => r.headers['x-goog-user-project'])).toEqual(['project-0', 'project-1', 'project-2']);
      expect(vertex.refused).toEqual([]);
      expect(oauth.issued.length - before).toBe(1);
      expect(oauth.refusals).toEqual([]);
    } finally {
      await gw.close();
      await vertex.close();
    }
  });

  it("a key's token_uri is where its grants go (a private endpoint), not Google's public one", async () => {
    const before = { oauth: oauth.issued.length, psc: psc.issued.length };
    const vertex = await startProviderUpstream(liveToken(() => psc));
    const key = serviceAccountKey(account.privateKeyPem, { token_uri: `https://${PSC_HOST}/token` });
    const gw = await startGateway(vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', key));
    try {
      const res = await gw.client().chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'hi' }] });
      expect(res.choices[0]?.message.content).toBe('Hello there');
      expect(vertex.refused).toEqual([]);
      expect(psc.issued.length - before.psc).toBe(1);
      expect(psc.refusals).toEqual([]); // the grant's audience is still Google's token URL
      expect(oauth.issued.length - before.oauth).toBe(0);
    } finally {
      await gw.close();
      await vertex.close();
    }
  });

  it('a grant Google refuses: 502 naming the backend, Google’s reason for the status, no key material anywhere', async () => {
    const stranger = keyPair(); // a key Google does not know for this account
    const vertex = await startProviderUpstream(liveToken(() => oauth));
    const gw = await startGateway(
      vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', serviceAccountKey(stranger.privateKeyPem)),
    );
    try {
      const res = await chat(gw.baseURL);
      expect(res.status).toBe(502);
      const text = await res.text();
      const error = (JSON.parse(text) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('upstream_credentials');
      expect(error.message).toContain('Backend "vertex" of model "gemini"');
      expect(vertex.requests).toEqual([]);
      const problem = await waitUntil(() => gw.identities.problems().get('default/vertex/vertex'), 5000, 'the recorded problem');
      expect(problem).toContain('Invalid JWT Signature');
      const keyBody = stranger.privateKeyPem.split('\n')[1]!;
      for (const where of [text, problem, gw.logText()]) expect(where).not.toContain(keyBody);
    } finally {
      await gw.close();
      await vertex.close();
    }
  });
  it('a provider quoting the access token it got: the client sees it masked, though no Secret holds it', async () => {
    // The provider refuses, quoting the Authorization header it received (some error pages do; a 401 is never relayed).
    const vertex = await startProviderUpstream((r) => `bad credential: ${r.headers.authorization}`, 403);
    const gw = await startGateway(vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', serviceAccountKey(account.privateKeyPem)));
    try {
      const res = await chat(gw.baseURL);
      expect(res.status).toBe(403);
      const text = await res.text();
      const token = /Bearer (ya29\.[\w-]+)/.exec(vertex.refused[0]?.reason ?? '')?.[1];
      expect(token).toBeDefined();
      expect(text).not.toContain(token);
      expect(text).toContain(`Bearer ${'*'.repeat(token!.length)}`);
    } finally {
      await gw.close();
      await vertex.close();
    }
  });

  it('a rotated service account key: the next request gets a token granted with the new key, the old token is dropped', async () => {
    const vertex = await startProviderUpstream(liveToken(() => oauth));
    const route = (privateKeyPem: string) =>
      vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', serviceAccountKey(privateKeyPem));
    const gw = await startGateway(route(account.privateKeyPem));
    try {
      expect((await chat(gw.baseURL)).status).toBe(200);
      gw.load(route(rotated.privateKeyPem));
      expect((await chat(gw.baseURL)).status).toBe(200);
      const sent = vertex.requests.map((r) => oauth.issued.find((t) => `Bearer ${t.token}` === r.headers.authorization)?.key);
      expect(sent).toEqual([0, 1]); // the old key's token, then the new key's
      expect(vertex.refused).toEqual([]);
    } finally {
      await gw.close();
      await vertex.close();
    }
  });

  it('a token endpoint that never answers: the fetch is given up, the route says why, and tokens flow once it answers', async () => {
    oauth.fault = 'silent';
    const vertex = await startProviderUpstream(liveToken(() => oauth));
    const gw = await startGateway(
      vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', serviceAccountKey(account.privateKeyPem)),
      {
        tokens: { fetchTimeoutMs: 500 },
      },
    );
    try {
      const problem = await waitUntil(() => gw.identities.problems().get('default/vertex/vertex'), 5000, 'the recorded problem');
      expect(problem).toContain('did not finish within 0.5 s');
      const refused = await chat(gw.baseURL);
      expect(refused.status).toBe(502);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('upstream_credentials');
      // The endpoint answers again: a later fetch (not the silent one the library started) gets a token.
      oauth.fault = undefined;
      await eventually(async () => expect((await chat(gw.baseURL)).status).toBe(200), 10_000);
      expect(vertex.refused).toEqual([]);
      await waitUntil(() => !gw.identities.problems().has('default/vertex/vertex'), 5000, 'the problem cleared');
    } finally {
      await gw.close();
      await vertex.close();
    }
  }, 20_000);

  it('a token answered without expires_in lives an hour: one grant for many requests, renewed before the hour ends', async () => {
    oauth.fault = 'no-expires-in';
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const before = oauth.grants;
    const vertex = await startProviderUpstream(liveToken(() => oauth));
    const gw = await startGateway(vertexRoute(vertex.origin, '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}', serviceAccountKey(account.privateKeyPem)));
    try {
      for (let i = 0; i < 10; i++) expect((await chat(gw.baseURL)).status).toBe(200);
      expect(oauth.grants - before).toBe(1);
      vi.advanceTimersByTime(56 * 60_000); // inside the last five minutes of the assumed hour
      expect((await chat(gw.baseURL)).status).toBe(200);
      await waitUntil(() => oauth.grants - before === 2, 5000, 'the renewal');
      for (let i = 0; i < 5; i++) expect((await chat(gw.baseURL)).status).toBe(200);
      expect(oauth.grants - before).toBe(2);
      expect(vertex.refused).toEqual([]);
    } finally {
      await gw.close();
      await vertex.close();
      vi.useRealTimers();
    }
  }, 20_000);
});

describe('gcp: workload identity through the metadata server', () => {
  const saved = { host: process.env['GCE_METADATA_HOST'], config: process.env['CLOUDSDK_CONFIG'], adc: process.env['GOOGLE_APPLICATION_CREDENTIALS'] };
  afterEach(() => {
    for (const [k, v] of [
      ['GCE_METADATA_HOST', saved.host],
      ['CLOUDSDK_CONFIG', saved.config],
      ['GOOGLE_APPLICATION_CREDENTIALS', saved.adc],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('takes the token the metadata server gives the pod, with the Metadata-Flavor header', async () => {
    const metadata = await startGoogleTokenServer({});
    process.env['GCE_METADATA_HOST'] = `127.0.0.1:${metadata.port}`;
    process.env['CLOUDSDK_CONFIG'] = '/nonexistent/gcloud'; // no gcloud user credentials found instead
    delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
    const vertex = await startProviderUpstream(liveToken(() => metadata));
    const gw = await startGateway(vertexRoute(vertex.origin, '{gcp: {}}'));
    try {
      const res = await gw.client().chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'hi' }] });
      expect(res.choices[0]?.message.content).toBe('Hello there');
      expect(vertex.refused).toEqual([]);
      expect(metadata.refusals).toEqual([]);
      expect(metadata.issued.map((t) => t.via)).toEqual(['metadata']);
    } finally {
      await gw.close();
      await vertex.close();
      await metadata.close();
    }
  });
});
