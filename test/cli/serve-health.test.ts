// /healthz and /readyz of the built CLI as docs/operations.md says them, through what goes wrong in production: config
// files that do not parse or do not validate (at start and later), Redis (--redis-url) absent at start or gone
// later, a Kubernetes API server unreachable at start. Liveness answers whenever the process serves HTTP; readiness
// waits for the first complete config load and the limits store's first answer, and nothing later takes it away but a
// drain. A replica stopped before it was ever ready (a rollout that gives up on it) shuts down gracefully: exit 0.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { type CliRun, runCli } from '../support/spawn-cli.js';
import { waitUntil } from '../support/wait.js';

const KEY = 'sk-health-0123456789abcdef';
const GOOD = `apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {client: ${KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat}
spec:
  backends: [{name: demo, baseURL: "demo://"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team}
spec: {models: ["*"], limits: {requestsPerMinute: 1000}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: dev}
spec: {group: team, secretRef: {name: keys, key: client}}
`;

let dir: string;
let redis: TestRedis | undefined;
const runs: CliRun[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-health-'));
  await writeFile(join(dir, 'good.yaml'), GOOD);
});
afterEach(() => {
  for (const r of runs.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function serve(config: string, extra: string[] = []): Promise<{ run: CliRun; api: string }> {
  const run = runCli(['serve', ...(config ? ['--config', config] : []), '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', ...extra]);
  runs.push(run);
  return { run, api: String((await run.waitForLog((l) => l.msg === 'model-gateway listening')).api) };
}

const probe = async (api: string, path: '/healthz' | '/readyz') => {
  const res = await fetch(`${api}${path}`);
  return `${res.status} ${await res.text()}`;
};
const chat = (api: string) =>
  new OpenAI({ baseURL: `${api}/v1`, apiKey: KEY, maxRetries: 0 }).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });

it('config errors: a file that does not parse and an object that does not validate, at start or later, leave the replica live, ready and serving the rest', async () => {
  const config = await mkdtemp(join(dir, 'errors-'));
  await writeFile(join(config, 'good.yaml'), GOOD);
  await writeFile(join(config, 'broken.yaml'), 'kind: ModelRoute\nspec: [unclosed\n');
  await writeFile(
    join(config, 'invalid.yaml'),
    'apiVersion: modelgateway.io/v1alpha1\nkind: ModelRoute\nmetadata: {name: bad}\nspec: {backends: [{name: x, baseURL: "ftp://nope"}]}\n',
  );
  const { run, api } = await serve(config);
  await run.waitForLog((l) => l.msg === 'first config loaded; ready');
  expect(await probe(api, '/healthz')).toBe('200 {"status":"ok"}');
  expect(await probe(api, '/readyz')).toBe('200 {"status":"ready"}');
  expect((await chat(api)).choices[0]?.message.content).toBeTruthy();

  // The good file broken later: its last version that parsed keeps serving, and readiness stays.
  await writeFile(join(config, 'good.yaml'), `${GOOD}\n---\nkind: [oops\n`);
  await run.waitForLog((l) => String(l.msg).includes('cannot parse') && String(l.msg).includes('good.yaml'), 10_000);
  expect(await probe(api, '/readyz')).toBe('200 {"status":"ready"}');
  expect((await chat(api)).choices[0]?.message.content).toBeTruthy();
}, 30_000);

it('Redis: not ready while it has never answered (live all along), ready once it does, and still ready, serving, when it goes away later', async () => {
  redis = await startRedis();
  await redis.kill(); // down before the gateway starts
  const { run, api } = await serve(dir, ['--redis-url', redis.url]);
  await run.waitForLog((l) => String(l.msg).startsWith('first config loaded; not ready until the limits store'), 15_000);
  expect(await probe(api, '/healthz')).toBe('200 {"status":"ok"}');
  expect(await probe(api, '/readyz')).toBe('503 {"status":"not ready"}');

  await redis.restart();
  await waitUntil(async () => (await probe(api, '/readyz')).startsWith('200'), 15_000, '/readyz 200 once Redis answers');
  expect((await chat(api)).choices[0]?.message.content).toBeTruthy();

  await redis.kill(); // gone later: limits fail open, readiness stays
  for (let i = 0; i < 3; i++) expect((await chat(api)).choices[0]?.message.content).toBeTruthy();
  expect(await probe(api, '/readyz')).toBe('200 {"status":"ready"}');
  expect(await probe(api, '/healthz')).toBe('200 {"status":"ok"}');
}, 30_000);

it('the Redis of kept items (--responses-redis-url) unreachable: ready and serving all the same, the failure logged; SIGTERM stops it', async () => {
  const { run, api } = await serve(dir, ['--responses-redis-url', `redis://127.0.0.1:${await freePort()}`]);
  await run.waitForLog((l) => String(l.msg).startsWith('the Redis of kept responses failed'), 15_000);
  await waitUntil(async () => (await probe(api, '/readyz')).startsWith('200'), 15_000, '/readyz 200 without that Redis');
  expect((await chat(api)).choices[0]?.message.content).toBeTruthy();
  run.child.kill('SIGTERM');
  expect(await run.exited, run.stdout()).toBe(0);
}, 30_000);

it('Kubernetes API unreachable at start: live, not ready; SIGTERM then is a graceful stop (exit 0, no error), not a failed start', async () => {
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${await freePort()}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
`,
  );
  const { run, api } = await serve('', ['--source', 'kubernetes', '--kubeconfig', kubeconfig, '--no-leader-election']);
  await run.waitForLog((l) => String(l.msg).startsWith('kubernetes list failed'), 15_000);
  expect(await probe(api, '/healthz')).toBe('200 {"status":"ok"}');
  expect(await probe(api, '/readyz')).toBe('503 {"status":"not ready"}');
  run.child.kill('SIGTERM');
  const code = await run.exited;
  const output = `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`;
  expect(code, output).toBe(0);
  expect(run.stderr(), output).toBe('');
  expect(run.stdout(), output).not.toContain('"level":50');
  expect(run.stdout()).toContain('stopped before the first complete config load');
}, 30_000);
