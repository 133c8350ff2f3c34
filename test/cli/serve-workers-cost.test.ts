// `serve --workers 2` through the real executable: the primary sums its workers' model_gateway_cost_total exactly,
// as integers of micro-units, where adding the decimals each worker renders drifts (0.1 + 0.2 = 0.30000000000000004).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { keyManifests } from '../helpers/gateway.js';
import { freePort } from '../support/free-port.js';
import { type CliRun, runCli } from '../support/spawn-cli.js';

const KEY = 'sk-workers-cost-0123456789abcdef';
const manifests = (baseURL: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat}
spec:
  # 1 input token at 100000 per million: 0.1 a request.
  backends: [{name: b, baseURL: "${baseURL}", pricing: {inputPerMTok: "100000", outputPerMTok: "0"}}]
---
${keyManifests(KEY, ['chat'])}`;

let r: CliRun | undefined;
let upstream: ScriptedChatUpstream | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (r?.child.exitCode === null) r.child.kill('SIGKILL');
  await upstream?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('the primary of --workers 2 sums its workers’ cost in micro-units: three requests of 0.1 make 0.3', async () => {
  upstream = await startScriptedChatUpstream([{ text: 'ok', finish: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0 } }]);
  dir = await mkdtemp(join(tmpdir(), 'mg-workers-cost-'));
  await writeFile(join(dir, 'all.yaml'), manifests(upstream.baseURL));
  const [port, metricsPort] = [await freePort(), await freePort()];
  r = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort), '--workers', '2']);
  const run = r;
  await run.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 1, 30_000);
  await run.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 2, 30_000);
  // A connection each, so the cluster hands them round-robin to both workers (one 0.1, the other 0.2).
  for (let i = 0; i < 3; i++) {
    const dispatcher = new Agent();
    const client = new OpenAI({
      baseURL: `http://127.0.0.1:${port}/v1`,
      apiKey: KEY,
      maxRetries: 0,
      fetch: undiciFetch as never,
      fetchOptions: { dispatcher },
    });
    await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    await dispatcher.close();
  }
  const served = await Promise.all([1, 2].map((w) => run.waitForLog((l) => l.msg === 'request' && l.worker === w && l.cost === '0.10', 10_000)));
  expect(served).toHaveLength(2); // both workers served: each renders its own sum, and the primary adds them
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(text).toMatch(/^model_gateway_cost_total\{group="team",model="chat"\} 0\.3$/m);
}, 60_000);
