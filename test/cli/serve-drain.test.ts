// SIGTERM on the real executable while requests are in flight (one slow SSE stream; then 100 streams and plain
// requests, an endless stream and a request its upstream never answers): what can finish does, what is still
// running at the drain deadline ends with an error the SDK raises, new connections are refused, the process exits 0
// (at once and with 1 on a second signal). The upstream is a fake OpenAI-compatible server on loopback.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait.js';
import { runCli, type CliRun } from '../support/spawn-cli.js';

const CHUNKS = 8;
const GAP_MS = 150;
let upstream: Server;
let upstreamURL: string;
let dir: string;
let gateway: CliRun | undefined;
/** Requests the upstream has received (all of them, any path). */
let received = 0;

beforeAll(async () => {
  // A slow streaming chat upstream: CHUNKS content chunks, GAP_MS apart, then [DONE].
  upstream = createServer((req, res) => {
    received++;
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/silent/')) return; // never answers
      if (req.url?.startsWith('/slowjson/')) {
        const timer = setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'c2',
              object: 'chat.completion',
              created: 1,
              model: 'up',
              choices: [{ index: 0, message: { role: 'assistant', content: 'late answer' }, finish_reason: 'stop' }],
            }),
          );
        }, 4 * GAP_MS);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      if (req.url?.startsWith('/held/')) return void res.write(chunk({ content: 'held ' }, null)); // one chunk, then nothing
      const timer = setInterval(() => {
        if (i < CHUNKS) res.write(chunk({ content: `part${i++} ` }, null));
        else {
          clearInterval(timer);
          res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
        }
      }, GAP_MS);
      res.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`;
  dir = await mkdtemp(join(tmpdir(), 'mg-drain-'));
  await writeFile(
    join(dir, 'config.yaml'),
    `apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {client: drain-test-key}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: slow}
spec:
  backends: [{name: up, baseURL: "${upstreamURL}"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: held}
spec:
  backends: [{name: up, baseURL: "${upstreamURL.replace('/v1', '/held/v1')}"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: slow-json}
spec:
  backends: [{name: up, baseURL: "${upstreamURL.replace('/v1', '/slowjson/v1')}"}]
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: silent}
spec:
  backends: [{name: up, baseURL: "${upstreamURL.replace('/v1', '/silent/v1')}"}]
  timeouts: {firstByte: 60s}
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

afterAll(async () => {
  if (gateway?.child.exitCode === null) gateway.child.kill('SIGKILL');
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  await rm(dir, { recursive: true, force: true });
});

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

describe('serve: SIGTERM drain', () => {
  it('lets an in-flight stream finish, refuses new connections, and exits 0', async () => {
    gateway = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--drain-timeout', '20s']);
    const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
    await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
    const api = new URL(String(listening.api));
    const client = new OpenAI({ baseURL: `${api.origin}/v1`, apiKey: 'drain-test-key', maxRetries: 0 });

    const stream = await client.chat.completions.create({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const parts: string[] = [];
    let signalled = false;
    let refusedDuringDrain: boolean | undefined;
    for await (const c of stream) {
      const piece = c.choices[0]?.delta.content;
      if (piece) parts.push(piece);
      if (!signalled && parts.length === 1) {
        signalled = true;
        gateway.child.kill('SIGTERM');
        // "draining:" is logged in the same tick as the listener closes ("shutdown requested" comes earlier).
        await gateway.waitForLog((l) => String(l.msg).startsWith('draining:'));
        refusedDuringDrain = await refused(Number(api.port));
      }
    }
    const code = await gateway.exited;
    const output = `stdout:\n${gateway.stdout()}\nstderr:\n${gateway.stderr()}`; // shown if an assertion fails
    expect(refusedDuringDrain, output).toBe(true);
    expect(parts, output).toEqual(Array.from({ length: CHUNKS }, (_, i) => `part${i} `));
    expect(code, output).toBe(0);
    expect(gateway.stdout()).toContain('drained: every in-flight request finished');
  });

  it('exits at once with code 1 on a second SIGTERM while a stream holds the drain open', async () => {
    // Regression (issue 12, item 9): the forced exit only set the exit code and waited 2 s for a stray handle.
    gateway = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--drain-timeout', '60s']);
    const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
    await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
    const client = new OpenAI({ baseURL: `${new URL(String(listening.api)).origin}/v1`, apiKey: 'drain-test-key', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'held', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value?.choices[0]?.delta.content).toBe('held ');
    const reading = it.next().catch(() => undefined); // the cut ends it
    gateway.child.kill('SIGTERM');
    const requested = await gateway.waitForLog((l) => l.msg === 'shutdown requested');
    await gateway.waitForLog((l) => String(l.msg).startsWith('draining:'));
    // Deliberate pause: a repeat within 500 ms counts as the same Ctrl-C (installSignalHandlers), not a second signal.
    await new Promise((r) => setTimeout(r, Math.max(0, Number(requested.time) + 600 - Date.now())));
    const t = Date.now();
    gateway.child.kill('SIGTERM');
    const code = await gateway.exited;
    const took = Date.now() - t;
    await reading;
    const output = `stdout:\n${gateway.stdout()}\nstderr:\n${gateway.stderr()}`;
    expect(code, output).toBe(1);
    expect(took, output).toBeLessThan(1_000);
    expect(gateway.stdout()).toContain('second signal while draining; exiting now');
  });

  it('under load: every started request finishes; at the drain deadline the rest end with errors the SDK raises; exit 0', async () => {
    const DRAIN_S = 3;
    gateway = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--drain-timeout', `${DRAIN_S}s`]);
    const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
    await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
    const api = new URL(String(listening.api));
    const client = new OpenAI({ baseURL: `${api.origin}/v1`, apiKey: 'drain-test-key', maxRetries: 0 });
    const STREAMS = 50;
    const PLAIN = 50;
    const before = received;
    const streams = Array.from({ length: STREAMS }, async () => {
      const s = await client.chat.completions.create({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'x' }] });
      let text = '';
      for await (const c of s) text += c.choices[0]?.delta.content ?? '';
      return text;
    });
    const plain = Array.from(
      { length: PLAIN },
      async () => (await client.chat.completions.create({ model: 'slow-json', messages: [{ role: 'user', content: 'x' }] })).choices[0]?.message.content,
    );
    const failure = (e: unknown) =>
      e instanceof OpenAI.APIError ? [e.constructor.name, e.status, e.code].filter(Boolean).join(' ') : `${(e as Error).name}: ${(e as Error).message}`;
    // An endless stream (one chunk, then silence) and a request whose upstream never answers: only the drain
    // deadline ends them, with an error of the SDK's own (regression: the stream was cut, and the SDK raised a bare
    // "TypeError: terminated").
    const endless = (async () => {
      const s = await client.chat.completions.create({ model: 'held', stream: true, messages: [{ role: 'user', content: 'x' }] });
      try {
        for await (const _ of s);
        return 'ended';
      } catch (e) {
        return failure(e);
      }
    })();
    const waiting = client.chat.completions.create({ model: 'silent', messages: [{ role: 'user', content: 'x' }] }).then(() => 'answered', failure);
    await waitUntil(() => received - before === STREAMS + PLAIN + 2, 10_000, 'every request to reach the upstream');
    const t = Date.now();
    gateway.child.kill('SIGTERM');
    await gateway.waitForLog((l) => String(l.msg).startsWith('draining:'));
    const refusedDuringDrain = await refused(Number(api.port));
    const [texts, answers, last, waited] = await Promise.all([Promise.all(streams), Promise.all(plain), endless, waiting]);
    const code = await gateway.exited;
    const took = Date.now() - t;
    const output = `stdout:\n${gateway.stdout()}\nstderr:\n${gateway.stderr()}`;
    const whole = Array.from({ length: CHUNKS }, (_, i) => `part${i} `).join('');
    expect(refusedDuringDrain, output).toBe(true);
    expect(
      texts.filter((x) => x !== whole),
      output,
    ).toEqual([]);
    expect(
      answers.filter((x) => x !== 'late answer'),
      output,
    ).toEqual([]);
    expect(last, output).toBe('APIError server_shutting_down');
    expect(waited, output).toBe('InternalServerError 503 server_shutting_down');
    expect(code, output).toBe(0);
    expect(gateway.stdout()).toContain('"cut":2');
    // The drain deadline bounds the exit, with a margin for the process's own teardown on a loaded machine.
    expect(took, output).toBeLessThan(DRAIN_S * 1000 + 3_000);
    expect(took, output).toBeGreaterThanOrEqual(DRAIN_S * 1000 - 100);
  }, 30_000);
});
