// Azure OpenAI with Microsoft Entra ID (auth.azureAD) through the real gateway, the official SDK as client, and the
// real identity library (@azure/identity / MSAL) talking to a fake Entra that checks tenant, client, secret or
// federated assertion and scope, and issues opaque tokens that expire; the fake Azure OpenAI accepts only a live
// token of that Entra. The recipe examples/providers/azure-openai-entra.yaml runs as written, its baseURL origin
// pointed at the fake. Entra is reached through HTTPS_PROXY (the Azure SDK honours it; see entra-token-server.ts for
// why not a localhost authorityHost), so the authority hosts are the real ones, login.microsoftonline.us included.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { Identities } from '../../src/dataplane/upstream/identity/identities.js';
import { type EntraApp, type EntraTokenServer, JWT_BEARER, startEntraTokenServer } from '../fakes/entra-token-server.js';
import { type ProviderRequest, type ProviderUpstream, startProviderUpstream } from '../fakes/provider-upstream.js';
import { ALICE_KEY, type GatewayOptions, startGateway, type TestGateway } from '../helpers/gateway.js';
import { selfSignedCert, type TestCert, trustCert } from '../support/tls-cert.js';
import { waitUntil } from '../support/wait.js';
import { recipe } from './recipe-setup.js';
import { hermeticEnv } from '../support/hermetic-env.js';

const RECIPE = 'azure-openai-entra.yaml';
const MODEL = 'gpt-4o';
/** namespace/route/backend of the recipe's backend. */
const BACKEND_ID = 'ai/gpt-4o-azure-entra/azure';
const MESSAGES = [{ role: 'user' as const, content: 'hi' }];

/** Process-wide state the tests change: proxy and workload-identity variables, restored after each test. */
const ENV = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NO_PROXY',
  'no_proxy',
  'AZURE_TENANT_ID',
  'AZURE_CLIENT_ID',
  'AZURE_FEDERATED_TOKEN_FILE',
  'AZURE_AUTHORITY_HOST',
  'AZURE_CLIENT_SECRET',
];

let cert: TestCert;
let untrust: () => void;
let tmp: string;
/** What each test started, closed after it whatever happened. */
let open: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  cert = selfSignedCert(['login.microsoftonline.com', 'login.microsoftonline.us', 'localhost', '127.0.0.1']);
  untrust = trustCert(cert.cert);
  tmp = mkdtempSync(join(tmpdir(), 'mg-entra-'));
});

afterAll(() => {
  untrust();
  rmSync(tmp, { recursive: true, force: true });
});

// Hermetic: no proxy or Azure setting of the machine leaks in (the Azure SDK reads NO_PROXY once per process).
hermeticEnv(ENV);

afterEach(async () => {
  for (const o of open.reverse()) await o.close();
  open = [];
});

const bearer = (r: ProviderRequest) => /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1];

/** The recipe's app registration, read from the recipe itself. */
function recipeApp(): { tenantId: string; clientId: string; secret: string } {
  let auth: { tenantId: string; clientId: string } | undefined;
  const { secrets } = recipe(RECIPE, {
    origin: 'http://127.0.0.1:1',
    edit: (docs) => {
      const route = docs.find((d) => d.kind === 'ModelRoute');
      auth = (route?.spec?.backends[0]?.['auth'] as { azureAD?: typeof auth } | undefined)?.azureAD;
    },
  });
  if (!auth) throw new Error('the recipe has no azureAD backend');
  return { tenantId: auth.tenantId, clientId: auth.clientId, secret: secrets['clientSecret']! };
}

interface Setup {
  readonly entra: EntraTokenServer;
  readonly provider: ProviderUpstream;
  /** For every provider request, in order: the token it carried and why it was refused (undefined: accepted). */
  readonly verdicts: Array<{ token: string | undefined; reason: string | undefined }>;
}

/** A fake Entra knowing `apps` (the Azure SDK sent to it through HTTPS_PROXY) and a fake Azure OpenAI checking its tokens. */
async function fakes(apps: EntraApp[], expected: { tenantId: string; clientId: string }): Promise<Setup> {
  const entra = await startEntraTokenServer({ tls: cert, apps });
  open.push(entra);
  process.env['HTTPS_PROXY'] = entra.proxyURL;
  const verdicts: Setup['verdicts'] = [];
  const provider = await startProviderUpstream((r) => {
    const token = bearer(r);
    // Azure OpenAI's v1 API with Entra: the token in Authorization, no api-key, on the recipe's path.
    const reason =
      r.pathname !== '/openai/v1/chat/completions'
        ? `path ${r.pathname}`
        : r.headers['api-key'] !== undefined
          ? 'unexpected api-key'
          : entra.reject(token, expected);
    verdicts.push({ token, reason });
    return reason;
  });
  open.push(provider);
  return { entra, provider, verdicts };
}

async function gateway(yaml: string, o: GatewayOptions = {}): Promise<TestGateway> {
  const gw = await startGateway(yaml, o);
  open.push(gw);
  return gw;
}

const post = (gw: TestGateway) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: MESSAGES }),
  });

describe('azureAD (Microsoft Entra ID) backends, the recipe against fakes of Entra and Azure OpenAI', () => {
  it('client secret: JSON and streamed chat completions carry a token Entra issued for the app; secret and token never shown', async () => {
    const app = recipeApp();
    const { entra, provider, verdicts } = await fakes([{ ...app }], app);
    const gw = await gateway(recipe(RECIPE, { origin: provider.origin }).yaml);
    const client = gw.client();

    const json = await client.chat.completions.create({ model: MODEL, messages: MESSAGES }).withResponse();
    expect(json.data.choices[0]?.message.content).toBe('Hello there');
    const stream = await client.chat.completions.create({ model: MODEL, messages: MESSAGES, stream: true }).withResponse();
    const chunks: unknown[] = [];
    let text = '';
    for await (const c of stream.data) {
      chunks.push(c);
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('Hello there');

    expect(verdicts).toHaveLength(2);
    expect(verdicts.map((v) => v.reason)).toEqual([undefined, undefined]);
    // The recipe's app, through the global cloud's authority (the recipe sets no authorityHost), with its secret.
    const granted = entra.issued.find((t) => t.token === verdicts[0]?.token);
    expect(granted).toMatchObject({ host: 'login.microsoftonline.com', tenantId: app.tenantId, clientId: app.clientId, via: 'secret' });
    expect(granted?.scope).toBe('https://cognitiveservices.azure.com/.default');
    // One token for the start-up warm-up and both requests: cached, not fetched per request.
    expect(entra.tokenRequests()).toBe(1);
    expect(verdicts[1]?.token).toBe(verdicts[0]?.token);

    const token = verdicts[0]!.token!;
    const shown = [
      gw.logText(),
      JSON.stringify([...json.response.headers]),
      JSON.stringify(json.data),
      JSON.stringify([...stream.response.headers]),
      JSON.stringify(chunks),
      JSON.stringify([...gw.identities.problems()]),
    ];
    for (const s of shown) {
      expect(s).not.toContain(app.secret);
      expect(s).not.toContain(token);
    }
    expect(gw.identities.problems().size).toBe(0);
  });

  it('workload identity: no secret, the federated token file is the client assertion, at the authorityHost given', async () => {
    const wi = { tenantId: '11111111-1111-1111-1111-111111111111', clientId: '22222222-2222-2222-2222-222222222222' };
    // What the AKS webhook mounts: a projected service-account token (a JWT; its content is opaque to the gateway).
    const federated = `eyJhbGciOiJSUzI1NiJ9.fake-service-account-token.${Date.now().toString(36)}`;
    const file = join(tmp, 'azure-identity-token');
    writeFileSync(file, federated);
    const { entra, provider, verdicts } = await fakes([{ ...wi, federatedToken: federated }], wi);
    Object.assign(process.env, { AZURE_TENANT_ID: wi.tenantId, AZURE_CLIENT_ID: wi.clientId, AZURE_FEDERATED_TOKEN_FILE: file });
    const { yaml } = recipe(RECIPE, {
      origin: provider.origin,
      edit: (docs) => {
        // The recipe's comment: for workload identity, drop secretRef, tenantId and clientId (and the Secret).
        docs.splice(
          docs.findIndex((d) => d.kind === 'Secret'),
          1,
        );
        for (const d of docs) for (const b of d.spec?.backends ?? []) b['auth'] = { azureAD: { authorityHost: 'https://login.microsoftonline.us' } };
      },
    });
    const gw = await gateway(yaml);

    const res = await gw.client().chat.completions.create({ model: MODEL, messages: MESSAGES });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    expect(verdicts.map((v) => v.reason)).toEqual([undefined]);
    const tokenRequests = entra.requests.filter((r) => r.method === 'POST');
    expect(tokenRequests).toHaveLength(1);
    const form = tokenRequests[0]!.form;
    expect(form.get('client_assertion')).toBe(federated);
    expect(form.get('client_assertion_type')).toBe(JWT_BEARER);
    expect(form.has('client_secret')).toBe(false);
    // authorityHost is honoured: the sovereign cloud's host, not the global one.
    expect(tokenRequests[0]!.host).toBe('login.microsoftonline.us');
    expect(entra.issued.find((t) => t.token === verdicts[0]?.token)).toMatchObject({ ...wi, via: 'assertion', host: 'login.microsoftonline.us' });
    expect(gw.logText()).not.toContain(federated);
  });

  it('workload identity with a token file Entra does not trust: 502 upstream_credentials, the reason recorded, nothing sent', async () => {
    const wi = { tenantId: '11111111-1111-1111-1111-111111111111', clientId: '22222222-2222-2222-2222-222222222222' };
    const file = join(tmp, 'stale-identity-token');
    // A token of another service account (or a stale one): the app's federated credential does not match it.
    writeFileSync(file, 'eyJhbGciOiJSUzI1NiJ9.another-service-account.sig');
    const { entra, provider, verdicts } = await fakes([{ ...wi, federatedToken: 'eyJhbGciOiJSUzI1NiJ9.the-trusted-one.sig' }], wi);
    Object.assign(process.env, { AZURE_TENANT_ID: wi.tenantId, AZURE_CLIENT_ID: wi.clientId, AZURE_FEDERATED_TOKEN_FILE: file });
    const { yaml } = recipe(RECIPE, {
      origin: provider.origin,
      edit: (docs) => {
        for (const d of docs) for (const b of d.spec?.backends ?? []) b['auth'] = { azureAD: {} };
      },
    });
    const gw = await gateway(yaml);

    const res = await post(gw);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_credentials');
    expect(entra.refusals.map((r) => r.description)).toContain('AADSTS70021: No matching federated identity record found for presented assertion.');
    const problems = await waitUntil(() => (gw.identities.problems().size > 0 ? gw.identities.problems() : undefined), 5_000, 'a recorded problem');
    expect(problems.get(BACKEND_ID)).toMatch(/AADSTS70021/);
    expect(verdicts).toEqual([]);
    expect(provider.requests).toEqual([]);
  });

  it("a scope for another resource: Entra issues the token, Azure OpenAI refuses it (401: told as the backend's credential)", async () => {
    const app = recipeApp();
    const { entra, provider, verdicts } = await fakes([{ ...app }], app);
    const { yaml } = recipe(RECIPE, {
      origin: provider.origin,
      edit: (docs) => {
        for (const d of docs)
          for (const b of d.spec?.backends ?? [])
            (b['auth'] as { azureAD: Record<string, unknown> }).azureAD['scope'] = 'https://management.azure.com/.default';
      },
    });
    const gw = await gateway(yaml);

    const res = await post(gw);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_credentials');
    expect(entra.issued.map((t) => t.scope)).toEqual(['https://management.azure.com/.default']);
    expect(verdicts.map((v) => v.reason)).toEqual(['token for scope https://management.azure.com/.default']);
  });

  it('short-lived tokens: renewed ahead of expiry, never sent expired, not fetched per request', async () => {
    const app = recipeApp();
    const { entra, provider, verdicts } = await fakes([{ ...app }], app);
    const lifetimeMs = 3_000;
    entra.lifetimeSeconds = lifetimeMs / 1000;
    // Time must pass for tokens to expire, on a clock the test moves on: Date alone is faked (it also runs with
    // real time; timers and I/O are real), and the gateway's token cache, the identity library (the expiry it
    // computes) and the fakes all read it, so the pauses between requests pass without waiting.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    // The cache's defaults: with a 3 s token, renewal at half its life, never used in its last tenth.
    const gw = await gateway(recipe(RECIPE, { origin: provider.origin }).yaml, { tokens: {} });

    const start = Date.now();
    let sent = 0;
    // Requests for more than two lifetimes, 50 ms apart on that clock to keep the count sane.
    while (Date.now() - start < 2.5 * lifetimeMs) {
      const res = await post(gw);
      sent++;
      expect(res.status, await res.text()).toBe(200);
      vi.advanceTimersByTime(50);
    }

    expect(verdicts).toHaveLength(sent);
    // The fake Azure OpenAI checked every token at arrival: issued by this Entra, for this app, and not expired.
    expect(verdicts.filter((v) => v.reason !== undefined)).toEqual([]);
    expect(provider.refused).toEqual([]);
    const used = new Set(verdicts.map((v) => v.token));
    expect(used.size).toBeGreaterThanOrEqual(3); // two lifetimes and a half cannot be served by fewer tokens
    expect(entra.issued.length).toBeGreaterThanOrEqual(3);
    expect(entra.issued.length).toBeLessThan(sent / 10); // renewed per lifetime, not per request
  });

  it('twenty concurrent first requests share one token request', async () => {
    const app = recipeApp();
    const { entra, verdicts, provider } = await fakes([{ ...app }], app);
    // Entra is slow to answer: the first token request (the gateway's start-up warm-up) is parked.
    const release = entra.hold();
    class CountingIdentities extends Identities {
      calls = 0;
      override authorize(...args: Parameters<Identities['authorize']>) {
        this.calls++;
        return super.authorize(...args);
      }
    }
    const identities = new CountingIdentities();
    const gw = await gateway(recipe(RECIPE, { origin: provider.origin }).yaml, { identities });
    await waitUntil(() => entra.tokenRequests() === 1, 5_000, 'the warm-up token request');

    const client = gw.client();
    const all = Promise.all(Array.from({ length: 20 }, () => client.chat.completions.create({ model: MODEL, messages: MESSAGES })));
    all.catch(() => {}); // awaited below; should a wait fail first, its rejection is not reported twice
    // All twenty are waiting for a credential while the one token request is in flight …
    await waitUntil(() => identities.calls >= 20, 5_000, 'twenty requests waiting for their credential');
    expect(entra.tokenRequests()).toBe(1);
    release();
    const answers = await all;

    expect(answers.map((a) => a.choices[0]?.message.content)).toEqual(Array(20).fill('Hello there'));
    // … and are served with its token: no other was asked for.
    expect(entra.tokenRequests()).toBe(1);
    expect(entra.issued).toHaveLength(1);
    expect(verdicts.map((v) => v.reason)).toEqual(Array(20).fill(undefined));
    expect(new Set(verdicts.map((v) => v.token))).toEqual(new Set([entra.issued[0]!.token]));
  });

  it('Entra refuses the secret: 502 upstream_credentials naming the backend, the reason recorded; recovers when it accepts again', async () => {
    const app = recipeApp();
    // The app's secret was rotated in Entra: the one in the gateway's Secret is no longer valid.
    const registered: EntraApp = { tenantId: app.tenantId, clientId: app.clientId, secret: 'rotated-secret-value-9876543210' };
    const { entra, provider, verdicts } = await fakes([registered], app);
    const gw = await gateway(recipe(RECIPE, { origin: provider.origin }).yaml);

    // The start-up warm-up already failed: the route's status has the reason before any request.
    const problems = await waitUntil(() => (gw.identities.problems().size > 0 ? gw.identities.problems() : undefined), 5_000, 'a recorded problem');
    expect([...problems.keys()]).toEqual([BACKEND_ID]);
    expect(problems.get(BACKEND_ID)).toMatch(/AADSTS7000215|invalid client secret/i);
    expect(entra.refusals.map((r) => r.error)).toContain('invalid_client');

    const res = await post(gw);
    const text = await res.text();
    expect(res.status).toBe(502);
    const body = JSON.parse(text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_credentials');
    expect(body.error.message).toContain('Backend "azure"');
    const shown = [text, JSON.stringify([...res.headers]), gw.logText(), JSON.stringify([...gw.identities.problems()])];
    for (const s of shown) expect(s).not.toContain(app.secret);
    expect(verdicts).toEqual([]); // nothing was sent to Azure OpenAI without a token
    expect(gw.logText()).toContain('a backend could not obtain its credential');

    // The failure is held: requests right after it are refused without asking Entra each time.
    const before = entra.tokenRequests();
    for (let i = 0; i < 5; i++) expect((await post(gw)).status).toBe(502);
    expect(entra.tokenRequests()).toBeLessThanOrEqual(before + 1);

    // Entra accepts the gateway's secret again (the rotation was undone): once the hold passes, requests succeed.
    registered.secret = app.secret;
    const ok = await waitUntil(
      async () => {
        const r = await post(gw);
        return r.status === 200 ? r : undefined;
      },
      10_000,
      'a successful request after Entra accepts the secret again',
    );
    expect(((await ok.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe('Hello there');
    expect(gw.identities.problems().size).toBe(0);
    expect(verdicts.at(-1)?.reason).toBeUndefined();
    expect(gw.logText()).toContain('a backend obtained its credential again');
  });
});
