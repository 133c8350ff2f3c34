// docs/operations.md's metrics table against a live /metrics of the built CLI after a mixed load: every metric served
// is in the table with its type and label names, every metric the table promises for this run is served, label
// values stay in bounded sets whatever clients send (random model names, ids in paths, an upstream's error text),
// and histogram buckets suit their unit. The load: every text family through the demo backend (one route failing
// over from a refused backend), an upstream answering 500 with a unique message, a limit's 429, 401s, 404s.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FAMILIES } from '../../src/model/families.js';
import { freePort } from '../support/free-port.js';
import { type CliRun, REPO_ROOT, runCli } from '../support/spawn-cli.js';

interface Row {
  readonly type: string;
  readonly labels: readonly string[];
  readonly when: string;
}

/** The table under **Metrics.** in docs/operations.md: name → type, label names, condition. */
function documented(): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const line of readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name || !/^(counter|gauge|histogram)$/.test(cells[2] ?? '')) continue;
    rows.set(name, { type: cells[2]!, labels: [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!), when: cells[4]! });
  }
  return rows;
}

interface Sample {
  readonly metric: string;
  readonly series: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Prometheus text: the type of each metric and its samples (a histogram's under the histogram's name). */
function parse(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const series = m[1]!;
    const metric = types.has(series) ? series : series.replace(/_(bucket|sum|count)$/, '');
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    samples.push({ metric, series, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

const KEY = 'sk-metrics-docs-0123456789abcdef';
const LIMITED_KEY = 'sk-metrics-docs-limited-0123456789';
/** Unique strings clients and the upstream send: none may become a label value. */
const MARK = `mark${randomUUID().slice(0, 8)}`;
let upstream: Server;
let dir: string;
let gateway: CliRun;
let metricsURL: string;
let apiURL: string;

beforeAll(async () => {
  // An upstream whose every answer is a 500 with a message of its own.
  upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `${MARK}-upstream-failure`, type: 'server_error' } }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const failing = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`;
  const refused = `http://127.0.0.1:${await freePort()}/v1`;
  dir = await mkdtemp(join(tmpdir(), 'mg-metrics-docs-'));
  await writeFile(
    join(dir, 'config.yaml'),
    `apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {client: ${KEY}, limited: ${LIMITED_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat}
spec:
  backends:
  - {name: down, baseURL: "${refused}", priority: 0}
  - {name: demo, baseURL: "demo://", priority: 1, pricing: {inputPerMTok: "1", outputPerMTok: "2"}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: embed}
spec:
  backends: [{name: demo, baseURL: "demo://"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: broken}
spec:
  backends: [{name: failing, baseURL: "${failing}"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team}
spec: {models: ["*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: small}
spec: {models: ["*"], limits: {requestsPerMinute: 1}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: dev}
spec: {group: team, secretRef: {name: keys, key: client}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: limited}
spec: {group: small, secretRef: {name: keys, key: limited}}
`,
  );
  // Tracing on (to a collector that refuses connections), per-token usage metrics and kept items in Redis (one that
  // refuses connections): their metrics are served too.
  const itemsRedis = `redis://127.0.0.1:${await freePort()}`;
  const flags = ['--usage-metrics-per-token', '--responses-redis-url', itemsRedis];
  gateway = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', ...flags], {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
  });
  const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
  await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
  apiURL = String(listening.api);
  metricsURL = String(listening.metrics);
});

afterAll(async () => {
  if (gateway?.child.exitCode === null) gateway.child.kill('SIGKILL');
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  await rm(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown, key = KEY) =>
  fetch(`${apiURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': `${MARK}-req` },
    body: JSON.stringify(body),
  }).then(async (r) => (await r.arrayBuffer(), r.status));
const get = (path: string, key = KEY) =>
  fetch(`${apiURL}${path}`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status));

async function mixedLoad(): Promise<void> {
  const client = new OpenAI({ baseURL: `${apiURL}/v1`, apiKey: KEY, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'hello' }];
  await client.chat.completions.create({ model: 'chat', messages });
  for await (const _ of await client.chat.completions.create({ model: 'chat', messages, stream: true, stream_options: { include_usage: true } }));
  await client.responses.create({ model: 'chat', input: 'hello' });
  await client.embeddings.create({ model: 'embed', input: 'hello' });
  expect(await post('/v1/messages', { model: 'chat', max_tokens: 10, messages })).toBe(200);
  await expect(client.chat.completions.create({ model: 'broken', messages })).rejects.toThrow();
  expect([200, 429]).toContain(await post('/v1/chat/completions', { model: 'chat', messages }, LIMITED_KEY)); // 429 the second time
  expect(await post('/v1/chat/completions', { model: 'chat', messages }, LIMITED_KEY)).toBe(429);
  expect(await post('/v1/chat/completions', { model: 'chat', messages }, `sk-${MARK}-wrong`)).toBe(401);
  expect(await get('/v1/models')).toBe(200);
  // What an attacker controls: model names, ids in paths, unknown paths.
  for (let i = 0; i < 20; i++) {
    const id = `${MARK}-${i}`;
    expect(await post('/v1/chat/completions', { model: id, messages })).toBe(404);
    expect(await post('/v1/embeddings', { model: id, input: 'x' })).toBe(404);
    expect(await get(`/v1/models/${id}`)).toBe(404);
    expect([400, 404]).toContain(await get(`/v1/videos/${id}`));
    expect([400, 404]).toContain(await get(`/v1/responses/${id}`));
    expect(await get(`/v1/${id}/x`)).toBe(404);
  }
  expect(await post('/v1/chat/completions', { model: `${MARK}${'m'.repeat(1024 * 1024)}`, messages })).toBe(404);
}

// The family label's values: the API families, and what is none of them.
const FAMILY_LABELS = new Set<string>([...FAMILIES, 'models', 'other']);
const OUTCOMES = new Set(['2xx', '3xx', '4xx', '429', '5xx', 'connect_error', 'credentials', 'timeout', 'aborted']);

it('every metric served is documented with its type and labels, every documented one is served, label values are bounded, buckets suit their unit', async () => {
  await mixedLoad();
  const scrape = async () => parse(await (await fetch(metricsURL)).text());
  const { types, samples } = await scrape();
  const docs = documented();
  const ours = [...types.keys()].filter((n) => !n.startsWith('process_') && !n.startsWith('nodejs_'));

  const undocumented = ours.filter((n) => !docs.has(n));
  expect(undocumented, 'served but not in docs/operations.md').toEqual([]);
  const wrongType = ours.filter((n) => docs.get(n)?.type !== types.get(n)).map((n) => `${n}: ${types.get(n)} served, ${docs.get(n)?.type} documented`);
  expect(wrongType).toEqual([]);
  const inThisRun = (when: string) => ['always', 'tracing on', '`--usage-metrics-per-token`', '`--responses-redis-url`'].includes(when);
  const missing = [...docs].filter(([n, row]) => inThisRun(row.when) && !types.has(n)).map(([n]) => n);
  expect(missing, 'documented but not served').toEqual([]);
  expect([...docs.values()].filter((r) => !inThisRun(r.when)).map((r) => r.when)).toEqual(Array(3).fill('`--source kubernetes`'));

  const labelled = new Set<string>();
  for (const s of samples.filter((x) => docs.has(x.metric))) {
    const names = Object.keys(s.labels).filter((l) => !(l === 'le' && s.series.endsWith('_bucket')));
    expect(names.sort(), s.series).toEqual([...docs.get(s.metric)!.labels].sort());
    labelled.add(s.metric);
  }
  // Labelled metrics this load did not touch have no samples, so their label names went unchecked above (a failed
  // video's credit is test/usage/video-credit.test.ts's).
  expect([...docs].filter(([n, r]) => inThisRun(r.when) && !labelled.has(n)).map(([n]) => n)).toEqual([
    'model_gateway_cost_credited_total',
    'model_gateway_budget_warnings_total',
  ]);

  // Bounded values: only what the config and fixed sets hold.
  const values = (label: string) => new Set(samples.filter((s) => label in s.labels && docs.has(s.metric)).map((s) => s.labels[label]!));
  expect([...values('model')].sort()).toEqual(['broken', 'chat', 'embed', 'unknown']);
  expect([...values('group')].sort()).toEqual(['none', 'small', 'team']);
  expect([...values('backend')].sort()).toEqual(['default/broken/failing', 'default/chat/demo', 'default/chat/down', 'default/embed/demo']);
  expect([...values('family')].filter((f) => !FAMILY_LABELS.has(f))).toEqual([]);
  expect([...values('status_class')].filter((c) => !/^[1-5]xx$/.test(c))).toEqual([]);
  expect([...values('outcome')].filter((o) => !OUTCOMES.has(o))).toEqual([]);
  expect([...values('outcome')]).toEqual(expect.arrayContaining(['2xx', '5xx', 'connect_error']));
  expect([...values('token')].sort()).toEqual(['default/dev', 'default/limited']);
  const leaked = samples.filter((s) => Object.values(s.labels).some((v) => v.includes(MARK) || v.length > 128));
  expect(leaked.map((s) => s.series)).toEqual([]);
  // More of the same does not grow the series.
  const series = samples.length;
  await mixedLoad();
  expect((await scrape()).samples.filter((s) => !s.metric.startsWith('process_') && !s.metric.startsWith('nodejs_')).length).toBe(
    samples.filter((s) => !s.metric.startsWith('process_') && !s.metric.startsWith('nodejs_')).length,
  );
  expect(series).toBeGreaterThan(0);

  // Buckets: increasing, ending at +Inf; seconds from milliseconds (or less) to at least a second; tokens whole.
  for (const name of ours.filter((n) => types.get(n) === 'histogram')) {
    const first = samples.find((s) => s.series === `${name}_bucket`)!;
    const key = JSON.stringify({ ...first.labels, le: undefined });
    const les = samples.filter((s) => s.series === `${name}_bucket` && JSON.stringify({ ...s.labels, le: undefined }) === key).map((s) => s.labels.le!);
    expect(les.at(-1), name).toBe('+Inf');
    const bounds = les.slice(0, -1).map(Number);
    expect(
      bounds.every((b, i) => i === 0 || b > bounds[i - 1]!),
      name,
    ).toBe(true);
    if (name.endsWith('_seconds')) {
      expect(bounds[0], name).toBeLessThanOrEqual(0.01);
      expect(bounds.at(-1), name).toBeGreaterThanOrEqual(1);
    } else expect(bounds.every((b) => Number.isInteger(b) && b >= 1)).toBe(true);
  }
}, 30_000);
