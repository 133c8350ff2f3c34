// SDK smoke test against a running gateway (kind.sh runs it through a port-forward). It uses the official openai
// SDK as any client would, and `kubectl patch` for the group change. Exits non-zero on the first failure.
//   MG_E2E_BASE_URL=http://127.0.0.1:18080/v1 npx tsx test/e2e/smoke.ts
// Environment: MG_E2E_BASE_URL (required), MG_E2E_NAMESPACE (default model-gateway), KUBECTL (command, split on
// spaces; default kubectl), MG_E2E_PROPAGATION_TIMEOUT_MS (default 30000).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { SMOKE } from './smoke-fixture.js';

const baseURL = process.env.MG_E2E_BASE_URL;
if (!baseURL) {
  process.stderr.write('MG_E2E_BASE_URL is required, e.g. http://127.0.0.1:18080/v1\n');
  process.exit(2);
}
const namespace = process.env.MG_E2E_NAMESPACE ?? SMOKE.namespace;
const kubectl = (process.env.KUBECTL ?? 'kubectl').split(' ').filter(Boolean);
const propagationTimeoutMs = Number(process.env.MG_E2E_PROPAGATION_TIMEOUT_MS ?? 30_000);

const client = new OpenAI({ baseURL, apiKey: SMOKE.key, maxRetries: 0, timeout: 30_000 });

async function modelIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const m of client.models.list()) ids.push(m.id);
  return ids.sort();
}

function patchGroup(group: string): void {
  execFileSync(
    kubectl[0]!,
    [
      ...kubectl.slice(1),
      'patch',
      'gatewaytokens.modelgateway.io',
      SMOKE.token,
      '--namespace',
      namespace,
      '--type',
      'merge',
      '--patch',
      JSON.stringify({ spec: { group } }),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
}

/** Polls /v1/models until it lists `expected`; returns how long that took. */
async function waitForModels(expected: readonly string[]): Promise<number> {
  const start = performance.now();
  let last: string[] = [];
  while (performance.now() - start < propagationTimeoutMs) {
    last = await modelIds();
    if (JSON.stringify(last) === JSON.stringify(expected)) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`/v1/models still lists ${JSON.stringify(last)} after ${propagationTimeoutMs} ms, want ${JSON.stringify(expected)}`);
}

async function expectStatus(status: number, call: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof OpenAI.APIError, `expected an API error, got ${String(err)}`);
    assert.equal(err.status, status);
    return err;
  }
  assert.fail(`expected HTTP ${status}, the call succeeded`);
}

const steps: [string, () => Promise<string | undefined>][] = [
  [
    "GET /v1/models lists exactly the models of the token's group",
    async () => {
      assert.deepEqual(await modelIds(), [...SMOKE.modelsBefore]);
    },
  ],
  [
    'an unknown key gets 401 invalid_api_key',
    async () => {
      const bad = new OpenAI({ baseURL, apiKey: 'sk-not-a-gateway-key', maxRetries: 0 });
      const err = await expectStatus(401, () => bad.models.list());
      assert.equal(err.code, 'invalid_api_key');
    },
  ],
  [
    'chat completion (non-streaming) with request id and backend headers',
    async () => {
      const { data, response } = await client.chat.completions
        .create({ model: SMOKE.chatModel, messages: [{ role: 'user', content: 'Say hello.' }] })
        .withResponse();
      const text = data.choices[0]?.message.content;
      assert.ok(typeof text === 'string' && text.length > 0, 'empty completion');
      assert.ok(response.headers.get('x-request-id'), 'no x-request-id');
      assert.equal(response.headers.get('x-model-gateway-backend'), 'demo');
      return `${JSON.stringify(text.slice(0, 40))}`;
    },
  ],
  [
    'chat completion (streaming) arrives as several chunks',
    async () => {
      const stream = await client.chat.completions.create({
        model: SMOKE.chatModel,
        messages: [{ role: 'user', content: 'Count to five.' }],
        stream: true,
      });
      let chunks = 0;
      let text = '';
      for await (const chunk of stream) {
        chunks++;
        text += chunk.choices[0]?.delta.content ?? '';
      }
      assert.ok(chunks >= 2, `only ${chunks} chunk(s)`);
      assert.ok(text.length > 0, 'no streamed text');
      return `${chunks} chunks`;
    },
  ],
  [
    'embeddings',
    async () => {
      const res = await client.embeddings.create({ model: SMOKE.embeddingModel, input: ['first', 'second'] });
      assert.equal(res.data.length, 2);
      for (const d of res.data) assert.ok(d.embedding.length > 0 && d.embedding.every((x) => Number.isFinite(x)));
      return `dimension ${res.data[0]!.embedding.length}`;
    },
  ],
  [
    'a model outside the group gets 403 model_not_allowed',
    async () => {
      const err = await expectStatus(403, () => client.chat.completions.create({ model: SMOKE.restrictedModel, messages: [{ role: 'user', content: 'hi' }] }));
      assert.equal(err.code, 'model_not_allowed');
    },
  ],
  [
    "kubectl patch of the token's group shows in /v1/models and opens the model",
    async () => {
      patchGroup(SMOKE.groupAfter);
      const ms = await waitForModels(SMOKE.modelsAfter);
      const res = await client.chat.completions.create({
        model: SMOKE.restrictedModel,
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.ok(res.choices.length > 0);
      return `visible after ${ms.toFixed(0)} ms`;
    },
  ],
  [
    'patching the group back closes it again',
    async () => {
      patchGroup(SMOKE.groupBefore);
      const ms = await waitForModels(SMOKE.modelsBefore);
      await expectStatus(403, () => client.chat.completions.create({ model: SMOKE.restrictedModel, messages: [{ role: 'user', content: 'hi' }] }));
      return `visible after ${ms.toFixed(0)} ms`;
    },
  ],
];

let failed = 0;
for (const [name, run] of steps) {
  try {
    const note = await run();
    process.stdout.write(`ok - ${name}${note ? ` (${note})` : ''}\n`);
  } catch (err) {
    failed++;
    process.stdout.write(`not ok - ${name}\n  ${String(err instanceof Error ? err.message : err).replace(/\n/g, '\n  ')}\n`);
    break; // later steps depend on earlier ones (the group change especially)
  }
}
process.stdout.write(failed === 0 ? `smoke: all ${steps.length} steps passed\n` : 'smoke: FAILED\n');
process.exitCode = failed === 0 ? 0 : 1;
