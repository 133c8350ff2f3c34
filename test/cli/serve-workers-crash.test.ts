// `serve --workers 2` through the real executable when a worker dies (SIGKILL, as the OOM killer does): the primary
// starts a replacement, and its metrics port keeps the dead worker's counters in the sums (a sum that went down
// would read as a counter reset, and rate() would count the survivor's whole total again), while the dead worker's
// gauges go with it. Then SIGTERM drains the survivors and the process exits 0.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { keyManifests } from '../helpers/gateway.js';
import { freePort } from '../support/free-port.js';
import { type CliRun, runCli } from '../support/spawn-cli.js';
import { waitUntil } from '../support/wait.js';

const KEY = 'sk-workers-crash-0123456789abcdef';
const manifests = `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat}
spec:
  backends: [{name: demo, baseURL: "demo://"}]
---
${keyManifests(KEY, ['chat'])}`;

let r: CliRun | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (r?.child.exitCode === null) r.child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One chat request on a connection of its own, so the cluster hands requests round-robin to the workers. */
async function chat(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};
const REQUESTS = 'model_gateway_requests_total{family="chat.completions",model="chat",group="team",status_class="2xx"}';
const TOKENS = 'model_gateway_tokens_total{group="team",model="chat",type="output",estimated="false"}';

it('replaces a worker killed by SIGKILL; the metrics port keeps its counters (no drop, no double count) and drops its gauges', async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-workers-crash-'));
  await writeFile(join(dir, 'all.yaml'), manifests);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const run = (r = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort), '--workers', '2']));
  await run.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 1, 20_000);
  await run.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 2, 20_000);
  const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();

  for (let i = 0; i < 6; i++) await chat(port);
  await Promise.all([1, 2].map((w) => run.waitForLog((l) => l.msg === 'request' && l.worker === w)));
  const before = await waitUntil(
    async () => {
      const t = await scrape();
      return sample(t, REQUESTS) === 6 ? t : undefined;
    },
    10_000,
    'six requests counted',
  );
  const limitBefore = sample(before, 'model_gateway_buffered_body_limit_bytes')!;
  const tokensBefore = sample(before, TOKENS)!;
  expect(tokensBefore).toBeGreaterThan(0);

  const workers = execFileSync('pgrep', ['-P', String(run.child.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);
  expect(workers).toHaveLength(2);
  process.kill(workers[0]!, 'SIGKILL');
  await run.waitForLog((l) => l.msg === 'a worker died; starting a replacement');
  await run.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 3, 20_000);

  const after = await scrape();
  const output = `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}\nmetrics:\n${after}`;
  expect(sample(after, REQUESTS), output).toBe(6); // the dead worker's requests are still counted, once
  expect(sample(after, TOKENS), output).toBe(tokensBefore);
  expect(sample(after, 'model_gateway_config_reloads_total'), output).toBe(3); // two workers' first loads, and the replacement's
  expect(sample(after, 'model_gateway_buffered_body_limit_bytes'), output).toBe(limitBefore); // two live workers' gauges
  const count = 'gen_ai_server_request_duration_seconds_count{family="chat.completions",model="chat",group="team",status_class="2xx"}';
  expect(sample(after, count), output).toBe(6);

  for (let i = 0; i < 4; i++) await chat(port);
  await run.waitForLog((l) => l.msg === 'request' && l.worker === 3);
  expect(sample(await scrape(), REQUESTS)).toBe(10);

  run.child.kill('SIGTERM');
  expect(await run.exited, output).toBe(0);
  expect(run.stdout().match(/drained: every in-flight request finished/g)).toHaveLength(2);
}, 30_000);
