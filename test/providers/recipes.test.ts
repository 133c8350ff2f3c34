// Every provider recipe of docs/providers.md (examples/providers/) runs against a fake of its provider that checks
// what the provider checks: the key's header or parameter, the pinned headers, the path layout, a SigV4 signature
// (verified by an independent implementation of the specification), a Google access token issued for the service
// account's signed JWT. Chat completions, JSON and streamed, through the real gateway and the official SDK. And no
// secret of any recipe shows in the gateway's logs, metrics or answers.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GoogleTokenServer, startGoogleTokenServer } from '../fakes/google-token-server.js';
import { type ProviderCheck, type ProviderRequest, startProviderUpstream } from '../fakes/provider-upstream.js';
import { verifySigV4 } from '../fakes/sigv4-verifier.js';
import { startGateway } from '../helpers/gateway.js';
import { redirectHttps } from '../support/redirect-https.js';
import { selfSignedCert } from '../support/tls-cert.js';
import { recipe, recipeText } from './recipe-setup.js';

const bearer = (req: ProviderRequest) => /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];

interface Recipe {
  readonly file: string;
  readonly model: string;
  /** What the provider checks, given the recipe's Secret values. */
  readonly check: (req: ProviderRequest, secrets: Record<string, string>) => string | undefined;
  /** The path the provider must have been asked for. */
  readonly path: string;
}

/** The Google service account of the Vertex recipe: a real key pair, so the fake can verify the JWT's signature. */
const sa = (() => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    email: 'gateway@my-project.iam.gserviceaccount.com',
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
})();
let google: GoogleTokenServer;

const RECIPES: Recipe[] = [
  {
    file: 'azure-openai-v1.yaml',
    model: 'gpt-4o',
    path: '/openai/v1/chat/completions',
    check: (r, s) => (r.headers['api-key'] !== s['apiKey'] ? 'api-key' : r.headers.authorization ? 'unexpected Authorization' : undefined),
  },
  {
    file: 'azure-openai-deployments.yaml',
    model: 'gpt-4o',
    path: '/openai/deployments/my-gpt-4o-deployment/chat/completions',
    check: (r, s) => (r.headers['api-key'] !== s['apiKey'] ? 'api-key' : r.query.get('api-version') !== '2024-10-21' ? 'api-version' : undefined),
  },
  {
    file: 'anthropic.yaml',
    model: 'claude-sonnet-4-5',
    path: '/v1/chat/completions',
    check: (r, s) => (r.headers['x-api-key'] !== s['apiKey'] ? 'x-api-key' : r.headers['anthropic-version'] !== '2023-06-01' ? 'anthropic-version' : undefined),
  },
  {
    file: 'gemini.yaml',
    model: 'gemini-2.5-flash',
    path: '/v1beta/openai/chat/completions',
    check: (r, s) => (r.query.get('key') !== s['apiKey'] ? 'key parameter' : r.headers.authorization ? 'unexpected Authorization' : undefined),
  },
  {
    file: 'bedrock-api-key.yaml',
    model: 'gpt-oss-120b',
    path: '/openai/v1/chat/completions',
    check: (r, s) => (bearer(r) !== s['apiKey'] ? 'bearer' : undefined),
  },
  {
    file: 'bedrock-sigv4.yaml',
    model: 'gpt-oss-120b',
    path: '/openai/v1/chat/completions',
    check: (r, s) => {
      const v = verifySigV4({ method: r.method, path: r.url, headers: r.headersDistinct, body: r.body }, (id) =>
        id === s['AWS_ACCESS_KEY_ID'] ? { accessKeyId: id, secretAccessKey: s['AWS_SECRET_ACCESS_KEY']! } : undefined,
      );
      if (!v.ok) return v.reason;
      if (v.region !== 'us-west-2' || v.service !== 'bedrock') return `scope ${v.region}/${v.service}`;
      return r.headers['x-amz-content-sha256'] === undefined ? 'body hash not sent' : undefined;
    },
  },
  {
    file: 'vertex-ai.yaml',
    model: 'gemini-2.5-flash',
    path: '/v1/projects/my-project/locations/us-central1/endpoints/openapi/chat/completions',
    check: (r) => (google.valid(bearer(r) ?? '') ? undefined : 'not a live Google access token'),
  },
  {
    file: 'vllm.yaml',
    model: 'llama-3.1-8b',
    path: '/v1/chat/completions',
    check: (r, s) => (bearer(r) !== s['apiKey'] ? 'bearer' : undefined),
  },
  {
    file: 'ollama.yaml',
    model: 'qwen3',
    path: '/v1/chat/completions',
    check: (r) => (r.headers.authorization ? 'unexpected Authorization' : undefined),
  },
];

let undoRedirect: () => void;

beforeAll(async () => {
  const cert = selfSignedCert(['oauth2.googleapis.com']);
  google = await startGoogleTokenServer({ tls: cert, serviceAccount: sa });
  undoRedirect = redirectHttps({ 'oauth2.googleapis.com': google.port }, cert.cert);
});

afterAll(async () => {
  undoRedirect();
  await google.close();
});

describe('provider recipes (examples/providers) against fakes of their providers', () => {
  it('cover every recipe file', () => {
    const files = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'providers.md'), 'utf8');
    for (const r of RECIPES) expect(files, `${r.file} is in docs/providers.md`).toContain(recipeText(r.file).trim());
  });

  it.each(RECIPES)('$file: chat completions, JSON and streamed, pass the provider’s checks', async (r) => {
    let secrets: Record<string, string> = {};
    const check: ProviderCheck = (req) => r.check(req, secrets);
    const provider = await startProviderUpstream(check);
    const setup = recipe(r.file, {
      origin: provider.origin,
      edit: (docs) => {
        // The Vertex recipe's key is a placeholder: a real service account key in its place.
        for (const d of docs)
          if (d.kind === 'Secret' && d.stringData?.['key.json'])
            d.stringData['key.json'] = JSON.stringify({ type: 'service_account', client_email: sa.email, private_key: sa.privateKeyPem, private_key_id: 'k1' });
      },
    });
    secrets = setup.secrets;
    const gw = await startGateway(setup.yaml);
    try {
      // The client tries to set the provider's headers itself: the backend's own win.
      const client = gw.client();
      const json = await client.chat.completions.create(
        { model: r.model, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'anthropic-version': '1999-01-01', 'api-key': 'client-key', 'x-api-key': 'client-key' } },
      );
      expect(json.choices[0]?.message.content).toBe('Hello there');
      const stream = await client.chat.completions.create({ model: r.model, messages: [{ role: 'user', content: 'hi' }], stream: true });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello there');
      expect(provider.refused).toEqual([]);
      expect(provider.requests.map((q) => q.pathname)).toEqual([r.path, r.path]);
      // Nothing the recipe keeps secret shows in the gateway's logs or metrics.
      const logs = gw.logText();
      const metrics = await gw.metrics.registry.metrics();
      for (const value of Object.values(secrets).filter((v) => v.length >= 8)) {
        expect(logs).not.toContain(value);
        expect(metrics).not.toContain(value);
      }
      for (const t of google.issued) expect(logs).not.toContain(t.token);
    } finally {
      await gw.close();
      await provider.close();
    }
  });

  it('a provider quoting the key it got in an error: the client sees it masked', async () => {
    // Gemini-style: the key is in the query; the provider refuses (400, as Gemini does) and quotes the URL it was asked for.
    const provider = await startProviderUpstream((req) => `API key not valid for ${req.url} (key ${req.query.get('key')})`, 400);
    const setup = recipe('gemini.yaml', { origin: provider.origin });
    const gw = await startGateway(setup.yaml);
    try {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${'sk-alice-client-key-0123456789'}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(400);
      const text = await res.text();
      const key = setup.secrets['apiKey']!;
      expect(provider.refused).toHaveLength(1);
      expect(provider.refused[0]!.reason).toContain(key); // the provider did quote it …
      expect(text).not.toContain(key); // … the client does not see it
      expect(text).not.toContain(encodeURIComponent(key));
      expect(text).toContain('*'.repeat(key.length));
    } finally {
      await gw.close();
      await provider.close();
    }
  });
});
