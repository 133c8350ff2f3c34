// A rolling update as Kubernetes does it, on the real executable: SIGTERM (or SIGINT) while streams and requests
// waiting for their upstream are in flight and new requests keep arriving on fresh connections. What was in flight
// finishes, each answer given during the drain says `connection: close` (so a keep-alive client does not send its
// next request on a socket the drain closes), new connections are refused or answered whole, nothing is cut, exit 0.
// The upstream holds every answer until the test releases it, so the order of events is decided, not timed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, createServer, request, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type CliRun, runCli } from '../support/spawn-cli.js';
import { waitUntil } from '../support/wait.js';

const KEY = 'sk-rolling-update-0123456789';
const CHUNKS = 5;
let upstream: Server;
let dir: string;
let gateway: CliRun | undefined;
/** Answers the upstream holds: released together by `release()`. */
const held: Array<() => void> = [];
const release = () => {
  for (const f of held.splice(0)) f();
};

const chunk = (content: string | undefined, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta: content ? { content } : {}, finish_reason: finish }] })}\n\n`;
const completion = (content: string) =>
  JSON.stringify({
    id: 'c2',
    object: 'chat.completion',
    created: 1,
    model: 'up',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });

function answer(url: string, body: { stream?: boolean }, res: ServerResponse): void {
  if (url.startsWith('/fast/')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(completion('fast'));
  if (!body.stream) return void held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(completion('held')));
  // A stream's first chunk at once, the rest when released.
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk('part0 ', null));
  held.push(() => {
    for (let i = 1; i < CHUNKS; i++) res.write(chunk(`part${i} `, null));
    res.end(`${chunk(undefined, 'stop')}data: [DONE]\n\n`);
  });
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d));
    req.on('end', () => answer(req.url ?? '', JSON.parse(raw || '{}') as { stream?: boolean }, res));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  dir = await mkdtemp(join(tmpdir(), 'mg-rolling-'));
  await writeFile(
    join(dir, 'config.yaml'),
    `apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {client: ${KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: held}
spec:
  backends: [{name: up, baseURL: "${base}/v1"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: fast}
spec:
  backends: [{name: up, baseURL: "${base}/fast/v1"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: all}
spec: {models: ["*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: t}
spec: {group: all, secretRef: {name: keys, key: client}}
`,
  );
});

afterEach(() => {
  release();
  if (gateway?.child.exitCode === null) gateway.child.kill('SIGKILL');
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  await rm(dir, { recursive: true, force: true });
});

interface Outcome {
  status?: number;
  connection?: string | undefined;
  body?: string;
  error?: string;
}

/** A chat request through node's own client, which shows the `connection` header the gateway sent. */
function chat(port: number, model: string, agent: Agent | false): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/chat/completions',
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ status: res.statusCode!, error: e.code ?? e.message }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }));
  });
}

async function start(): Promise<{ run: CliRun; port: number; client: OpenAI }> {
  const run = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--drain-timeout', '15s']);
  gateway = run;
  const port = Number(new URL(String((await run.waitForLog((l) => l.msg === 'model-gateway listening')).api)).port);
  await run.waitForLog((l) => l.msg === 'first config loaded; ready');
  return { run, port, client: new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: KEY, maxRetries: 0 }) };
}

async function readStream(client: OpenAI): Promise<string> {
  const s = await client.chat.completions.create({ model: 'held', stream: true, messages: [{ role: 'user', content: 'x' }] });
  let text = '';
  for await (const c of s) text += c.choices[0]?.delta.content ?? '';
  return text;
}

const WHOLE = Array.from({ length: CHUNKS }, (_, i) => `part${i} `).join('');

it('SIGTERM under traffic: in-flight streams and requests finish, answers in the drain say connection: close, new connections are refused or answered whole, exit 0', async () => {
  const { run, port, client } = await start();
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });
  const streams = Array.from({ length: 4 }, () => readStream(client));
  const waiting = Array.from({ length: 4 }, () => chat(port, 'held', keepAlive));
  await waitUntil(() => held.length === 8, 10_000, 'every request to reach the upstream');

  // New requests keep arriving, each on a fresh connection, until the process is gone.
  let exited = false;
  const arrivals: Outcome[] = [];
  const arriving = (async () => {
    while (!exited) arrivals.push(await chat(port, 'fast', false));
  })();
  await waitUntil(() => arrivals.length >= 3, 10_000, 'arrivals answered before the signal');

  run.child.kill('SIGTERM');
  await run.waitForLog((l) => String(l.msg).startsWith('draining:'));
  const beforeDrain = arrivals.length;
  await waitUntil(() => arrivals.length > beforeDrain + 2, 10_000, 'arrivals during the drain');
  release();
  const [texts, answers] = await Promise.all([Promise.all(streams), Promise.all(waiting)]);
  const code = await run.exited;
  exited = true;
  await arriving;
  keepAlive.destroy();
  const output = `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`;

  expect(texts, output).toEqual(Array(4).fill(WHOLE));
  // Answered during the drain: the keep-alive client is told to open a new connection for its next request.
  expect(
    answers.map((a) => [
      a.status,
      a.connection,
      (JSON.parse(a.body ?? '{}') as { choices?: { message: { content: string } }[] }).choices?.[0]?.message.content,
    ]),
  ).toEqual(Array(4).fill([200, 'close', 'held']));
  // Each arrival was answered whole, or its connection refused before anything was answered (a connection the
  // kernel had queued when the listener closed is reset: the gateway never read it).
  const refusedEarly = (a: Outcome) => a.status === undefined && (a.error === 'ECONNREFUSED' || a.error === 'ECONNRESET');
  const bad = arrivals.filter((a) => !(a.status === 200 && a.body?.includes('"fast"')) && !refusedEarly(a));
  expect(bad, output).toEqual([]);
  expect(arrivals.slice(beforeDrain).some((a) => a.error === 'ECONNREFUSED')).toBe(true);
  expect(code, output).toBe(0);
  const lines = run
    .stdout()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  // Every request served has its access line, none lost on exit; the drain's verdict is logged.
  const served = arrivals.filter((a) => a.status === 200).length + 8;
  expect(lines.filter((l) => l.msg === 'request' && l.status === 200)).toHaveLength(served);
  expect(lines.some((l) => l.msg === 'drained: every in-flight request finished')).toBe(true);
  expect(lines.at(-1)).toMatchObject({ msg: 'stopped', exitCode: 0 }); // the last line says the stop was clean
}, 30_000);

it('SIGINT drains as SIGTERM does: a stream in flight finishes and the process exits 0', async () => {
  const { run, client } = await start();
  const stream = readStream(client);
  await waitUntil(() => held.length === 1, 10_000, 'the stream to reach the upstream');
  run.child.kill('SIGINT');
  await run.waitForLog((l) => String(l.msg).startsWith('draining:'));
  release();
  expect(await stream).toBe(WHOLE);
  expect(await run.exited).toBe(0);
  expect(run.stdout()).toContain('"signal":"SIGINT"');
}, 20_000);
