// A soak: the production build started as the image starts it, driven for minutes with mixed traffic (every
// family, streams, sealed-id follow-ups, uploads, clients that abort mid-stream and mid-upload, bad requests)
// while its manifests are rewritten every few seconds. Reports what a leak would show: the RSS slope over the
// second half, heap slope, and active handles at the start and the end, plus every request by outcome.
//
//   npm run bench:soak [-- --minutes 10] [--concurrency 6] [--reload-every 5]
//
// The upstream is a second gateway process serving the built-in demo backend (examples/local): an independent
// OpenAI-compatible server with chat, responses (stored, so follow-ups work), embeddings, audio and videos.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI, { toFile } from 'openai';
import { run, start } from './lib/procs.js';
import { scrapeSeries } from './lib/prom-text.js';
import { freePort } from '../test/support/free-port.js';
import { GATEWAY_NODE_FLAGS, ROOT, startGateway } from './lib/targets.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '6' },
    'reload-every': { type: 'string', default: '5' },
    'sample-every': { type: 'string', default: '10' },
    out: { type: 'string', default: join(ROOT, 'bench/results/soak-latest') },
  },
});
const MINUTES = Number(values.minutes);
const CONCURRENCY = Number(values.concurrency);
const RELOAD_MS = Number(values['reload-every']) * 1000;
const SAMPLE_MS = Number(values['sample-every']) * 1000;
const CLIENT_KEY = 'sk-soak-client-0123456789abcdef';
const UPSTREAM_KEY = 'mg-demo-key'; // the demo upstream's client key (examples/local)

type Outcome = 'ok' | 'expected-error' | 'aborted' | 'unexpected';
const counts = new Map<string, Record<Outcome, number>>();
const failures: string[] = [];
function count(kind: string, outcome: Outcome, detail?: string): void {
  const c = counts.get(kind) ?? { ok: 0, 'expected-error': 0, aborted: 0, unexpected: 0 };
  c[outcome]++;
  counts.set(kind, c);
  if (outcome === 'unexpected' && failures.length < 20) failures.push(`${kind}: ${detail}`);
}

function manifests(upstreamURL: string, version: number): { base: string; extra: string } {
  const route = (name: string, model: string) => `apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  backends: [{name: up, baseURL: "${upstreamURL}", model: ${model}, apiKeySecretRef: {name: soak, key: upstream}}]
`;
  const base = `apiVersion: v1
kind: Secret
metadata: {name: soak}
stringData: {upstream: ${UPSTREAM_KEY}, client: ${CLIENT_KEY}}
---
${route('soak-chat', 'demo-chat')}---
${route('soak-embed', 'demo-embed')}---
${route('soak-media', 'demo-media')}---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: soakers}
spec: {models: ["soak-*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: soaker}
spec: {group: soakers, secretRef: {name: soak, key: client}}
`;
  // The churned file: a changing set of routes and tokens (added, changed, removed) on every reload.
  const n = version % 5;
  const extra = Array.from(
    { length: n + 1 },
    (_, i) => `${route(`soak-extra-${i}`, 'demo-chat')}---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: extra-${i}}
spec: {group: soakers, sha256: "${String(version).padStart(2, '0').repeat(32).slice(0, 64)}", disabled: ${i % 2 === 0}}
`,
  ).join('---\n');
  return { base, extra };
}

/** Replaces the file as editors and `mv` do (write aside, rename over) or in place, alternately. */
function replaceFile(path: string, text: string, version: number): void {
  if (version % 2 === 0) writeFileSync(path, text);
  else {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  }
}

interface Sample {
  readonly rssMB: number;
  readonly heapMB: number;
  readonly handles: number;
  readonly requests: number;
}

async function metricsSample(url: string): Promise<Sample> {
  const names = ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_active_handles_total', 'nodejs_active_requests_total'];
  const v = await scrapeSeries(url, names);
  const pick = (name: string) => v[name] ?? Number.NaN;
  return {
    rssMB: pick('process_resident_memory_bytes') / 2 ** 20,
    heapMB: pick('nodejs_heap_size_used_bytes') / 2 ** 20,
    handles: pick('nodejs_active_handles_total'),
    requests: pick('nodejs_active_requests_total'),
  };
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const num = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return num / den;
}

/** A raw upload that stops halfway and hangs up (the gateway must give its bytes back and send nothing upstream). */
function abandonedUpload(base: string): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(`${base}/v1/audio/transcriptions`);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': 2_000_000 },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(Buffer.alloc(500_000, 0x61), () => setTimeout(() => req.destroy(), 20));
  });
}

async function oneRequest(client: OpenAI, base: string, i: number): Promise<void> {
  const pick = i % 12;
  const kind = [
    'chat',
    'chat-stream',
    'stream-abort',
    'responses',
    'responses-follow',
    'embeddings',
    'transcription',
    'upload-abort',
    'bad-key',
    'unknown-model',
    'bad-json',
    'chat',
  ][pick]!;
  try {
    switch (kind) {
      case 'chat': {
        const r = await client.chat.completions.create({ model: 'soak-chat', messages: [{ role: 'user', content: `soak ${i}` }] });
        return count(kind, r.choices[0]?.message.content?.includes(`soak ${i}`) ? 'ok' : 'unexpected', 'content');
      }
      case 'chat-stream': {
        const s = await client.chat.completions.create({ model: 'soak-chat', stream: true, messages: [{ role: 'user', content: 'stream it' }] });
        let text = '';
        for await (const c of s) text += c.choices[0]?.delta.content ?? '';
        return count(kind, text.includes('stream it') ? 'ok' : 'unexpected', 'stream text');
      }
      case 'stream-abort': {
        const ac = new AbortController();
        const s = await client.chat.completions.create(
          { model: 'soak-chat', stream: true, messages: [{ role: 'user', content: 'a b c d e f g h' }] },
          { signal: ac.signal },
        );
        try {
          for await (const _ of s) {
            ac.abort();
          }
        } catch {
          // the abort surfaces as an error from the iterator
        }
        return count(kind, 'aborted');
      }
      case 'responses':
      case 'responses-follow': {
        const r = await client.responses.create({ model: 'soak-chat', input: `remember ${i}` });
        if (kind === 'responses') return count(kind, r.id.startsWith('resp_') ? 'ok' : 'unexpected', r.id);
        const again = await client.responses.retrieve(r.id);
        const next = await client.responses.create({ model: 'soak-chat', input: 'and then?', previous_response_id: r.id });
        return count(kind, again.id === r.id && next.previous_response_id === r.id ? 'ok' : 'unexpected', 'sealed ids');
      }
      case 'embeddings': {
        const r = await client.embeddings.create({ model: 'soak-embed', input: ['a', 'b'] });
        return count(kind, r.data.length === 2 ? 'ok' : 'unexpected', 'embeddings');
      }
      case 'transcription': {
        const r = await client.audio.transcriptions.create({ model: 'soak-media', file: await toFile(Buffer.alloc(64 * 1024, 1), 'a.wav') });
        return count(kind, typeof r.text === 'string' ? 'ok' : 'unexpected', 'transcription');
      }
      case 'upload-abort':
        await abandonedUpload(base);
        return count(kind, 'aborted');
      case 'bad-key': {
        const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-not-a-key', maxRetries: 0 });
        await bad.models.list();
        return count(kind, 'unexpected', 'a bad key was accepted');
      }
      case 'unknown-model':
        await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] });
        return count(kind, 'unexpected', 'unknown model served');
      case 'bad-json': {
        const r = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${CLIENT_KEY}` },
          body: '{"model": "soak-chat", ',
        });
        return count(kind, r.status === 400 ? 'expected-error' : 'unexpected', `status ${r.status}`);
      }
    }
  } catch (err) {
    const status = (err as { status?: number }).status;
    const expected = (kind === 'bad-key' && status === 401) || (kind === 'unknown-model' && status === 404);
    count(kind, expected ? 'expected-error' : 'unexpected', `${status ?? ''} ${(err as Error).message}`.slice(0, 200));
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-soak-'));
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  console.log(`building (npm run build) …`);
  await run('npm', ['run', 'build'], { timeoutMs: 300_000 });

  const upstreamPort = await freePort();
  const upstream = await start({
    name: 'upstream',
    cmd: process.execPath,
    args: [
      join(ROOT, 'dist/cli.js'),
      'serve',
      '--config',
      join(ROOT, 'examples/local'),
      '--host',
      '127.0.0.1',
      '--port',
      String(upstreamPort),
      '--metrics-port',
      '0',
      '--log-level',
      'warn',
    ],
    port: upstreamPort,
    readyUrl: `http://127.0.0.1:${upstreamPort}/readyz`,
    stdoutFile: join(dir, 'upstream.log'),
    stderrFile: join(dir, 'upstream.err'),
  });
  const upstreamURL = `http://127.0.0.1:${upstreamPort}/v1`;
  let version = 0;
  const m = manifests(upstreamURL, version);
  writeFileSync(join(configDir, 'base.yaml'), m.base);
  writeFileSync(join(configDir, 'extra.yaml'), m.extra);
  const gateway = await startGateway({ configDir, dir, nodeArgs: GATEWAY_NODE_FLAGS, name: 'soak-gateway' });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0, timeout: 30_000 });

  const started = Date.now();
  const endAt = started + MINUTES * 60_000;
  const samples: Array<{ t: number } & Sample> = [];
  const sample = async () => samples.push({ t: (Date.now() - started) / 60_000, ...(await metricsSample(gateway.metricsUrl!)) });
  await sample();
  const sampler = setInterval(() => void sample(), SAMPLE_MS);
  let reloads = 0;
  const reloader = setInterval(() => {
    version++;
    replaceFile(join(configDir, 'extra.yaml'), manifests(upstreamURL, version).extra, version);
    reloads++;
  }, RELOAD_MS);
  let next = 0;
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < endAt) {
      await oneRequest(client, gateway.url, next++);
      // Bounded rate: a short pause between requests of one worker (the soak is about time, not load).
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  const progress = setInterval(() => {
    const last = samples.at(-1);
    console.log(`${((Date.now() - started) / 60_000).toFixed(1)} min: ${next} requests, RSS ${last?.rssMB.toFixed(1)} MB, handles ${last?.handles}`);
  }, 60_000);
  await Promise.all(workers);
  clearInterval(reloader);
  clearInterval(progress);
  // Quiet for a moment, then the final sample: what stays after the traffic.
  await new Promise((r) => setTimeout(r, 5_000));
  clearInterval(sampler);
  await sample();

  const half = samples.filter((s) => s.t >= MINUTES / 2);
  const result = {
    date: new Date().toISOString(),
    minutes: MINUTES,
    concurrency: CONCURRENCY,
    reloads,
    requests: next,
    loadAverage: (await import('node:os')).loadavg(),
    outcomes: Object.fromEntries(counts),
    unexpected: [...counts.values()].reduce((s, c) => s + c.unexpected, 0),
    failures,
    rssMB: { start: samples[0]!.rssMB, middle: half[0]?.rssMB, end: samples.at(-1)!.rssMB, max: Math.max(...samples.map((s) => s.rssMB)) },
    rssSlopeMBPerMinSecondHalf: slope(half.map((s) => [s.t, s.rssMB])),
    heapSlopeMBPerMinSecondHalf: slope(half.map((s) => [s.t, s.heapMB])),
    handles: { start: samples[0]!.handles, end: samples.at(-1)!.handles, max: Math.max(...samples.map((s) => s.handles)) },
    samples,
  };
  await gateway.proc.stop();
  await upstream.stop();
  rmSync(dir, { recursive: true, force: true });

  const rows = Object.entries(result.outcomes).map(([k, c]) => `| ${k} | ${c.ok} | ${c['expected-error']} | ${c.aborted} | ${c.unexpected} |`);
  const md = `# Soak: ${MINUTES} min, ${CONCURRENCY} clients, a reload every ${RELOAD_MS / 1000} s

${result.date}; load average at the end ${result.loadAverage.map((l) => l.toFixed(2)).join(' ')}; ${result.requests} requests, ${reloads} reloads.

| measure | value |
|---|---:|
| RSS at start / middle / end / max (MB) | ${result.rssMB.start.toFixed(1)} / ${result.rssMB.middle?.toFixed(1)} / ${result.rssMB.end.toFixed(1)} / ${result.rssMB.max.toFixed(1)} |
| RSS slope over the second half (MB/min) | ${result.rssSlopeMBPerMinSecondHalf.toFixed(2)} |
| heap-used slope over the second half (MB/min) | ${result.heapSlopeMBPerMinSecondHalf.toFixed(2)} |
| active handles at start / end / max | ${result.handles.start} / ${result.handles.end} / ${result.handles.max} |
| unexpected outcomes | ${result.unexpected} |

| request kind | ok | expected error | aborted by the client | unexpected |
|---|---:|---:|---:|---:|
${rows.join('\n')}
${failures.length ? `\nFirst unexpected outcomes:\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : ''}`;
  writeFileSync(`${values.out}.md`, md);
  writeFileSync(`${values.out}.json`, JSON.stringify(result, null, 2));
  console.log(md);
  process.exit(result.unexpected === 0 ? 0 : 1);
}

await main();
