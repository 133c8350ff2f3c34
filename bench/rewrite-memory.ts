// RSS of the gateway while it relays large answers whose ids it must seal: N concurrent /v1/responses answers of
// SIZE each (JSON, or with --gzip compressed by the upstream), through the production build with the benchmark's
// configuration (1,000 routes, 10,000 tokens). Prints the gateway's RSS when idle, its peak while the answers flow,
// and after they are done (and after a quiet second). Not part of `npm run bench`: a focused measurement.
//
//   npm run build && node --import tsx bench/rewrite-memory.ts [--concurrency 8] [--size-mb 30] [--gzip] [--cli path/to/cli.js]
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { BENCH_KEY, BENCH_MODEL, writeManifests } from './lib/manifests.js';
import { rssBytes } from './lib/procs.js';
import { GATEWAY_NODE_FLAGS, startGateway } from './lib/targets.js';

const { values: opt } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '8' },
    'size-mb': { type: 'string', default: '30' },
    gzip: { type: 'boolean', default: false },
    cli: { type: 'string' },
  },
});
const concurrency = Number(opt.concurrency);
const size = Number(opt['size-mb']) * 1024 * 1024;
const MB = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

/** A Response object of about `size` bytes, written in 64 KiB blocks with back-pressure (or gzip-compressed). */
async function answer(res: ServerResponse): Promise<void> {
  const head = Buffer.from(
    '{"id":"resp_upstream_large","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"',
  );
  const tail = Buffer.from('"}]}],"previous_response_id":"resp_upstream_prev","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}');
  const block = Buffer.alloc(64 * 1024, 'lorem ipsum ');
  res.writeHead(200, { 'content-type': 'application/json', ...(opt.gzip ? { 'content-encoding': 'gzip' } : {}) });
  const out = opt.gzip ? zlib.createGzip() : res;
  if (opt.gzip) out.pipe(res);
  const write = async (b: Buffer) => {
    if (!out.write(b)) await once(out, 'drain');
  };
  await write(head);
  for (let sent = 0; sent < size; sent += block.length) await write(block);
  out.end(tail);
}

const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => void answer(res).catch(() => res.destroy()));
});
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');
const dir = mkdtempSync(join(tmpdir(), 'mg-rewrite-mem-'));
writeManifests(join(dir, 'config'), `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`);
const gateway = await startGateway({ configDir: join(dir, 'config'), dir, nodeArgs: [...GATEWAY_NODE_FLAGS, ...(opt.cli ? [opt.cli] : [])] });

try {
  await sleep(2_000);
  const idle = rssBytes(gateway.pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(gateway.pid))), 20);
  let sealed = 0;
  let bytes = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const res = await fetch(`${gateway.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: BENCH_MODEL, input: 'hi' }),
      });
      let head = '';
      for await (const chunk of res.body!) {
        if (head.length < 64) head += Buffer.from(chunk).toString('latin1');
        bytes += chunk.length;
      }
      if (res.status === 200 && head.startsWith('{"id":"resp_') && !head.includes('resp_upstream_large')) sealed++;
    }),
  );
  const seconds = (Date.now() - started) / 1e3;
  clearInterval(sampler);
  const after = rssBytes(gateway.pid);
  await sleep(1_000);
  const settled = rssBytes(gateway.pid);
  console.log(
    `${concurrency} × ${MB(size)} /v1/responses${opt.gzip ? ' (gzip from the upstream)' : ''} in ${seconds.toFixed(1)} s, ${MB(bytes)} relayed, ` +
      `${sealed}/${concurrency} with a sealed id\nRSS: idle ${MB(idle)}, peak ${MB(peak)}, right after ${MB(after)}, 1 s later ${MB(settled)}`,
  );
} finally {
  await gateway.proc.stop();
  upstream.close();
  rmSync(dir, { recursive: true, force: true });
}
