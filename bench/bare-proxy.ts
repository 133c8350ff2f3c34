// The floor of our own stack: express 5 + an undici pool, passing every request through untouched (no auth, no
// routing, no parsing, no metrics, no logs). The gateway can't be cheaper than this; the benchmark's
// gateway/bare ratio is what our own logic costs.
//
//   node --import tsx bench/bare-proxy.ts --upstream http://127.0.0.1:PORT [--port 0]   → prints `LISTENING <port>`
import { parseArgs } from 'node:util';
import express from 'express';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: { upstream: { type: 'string' }, port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
});
if (!values.upstream) throw new Error('--upstream is required');
const pool = new Pool(values.upstream, { keepAliveTimeout: 60_000 });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'upgrade', 'proxy-connection', 'te', 'trailer']);

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(async (req, res) => {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = String(v);
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ac.abort(); // client went away: stop the upstream request
  });
  try {
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const up = await pool.request({ path: req.originalUrl, method: req.method as 'POST', headers, body: hasBody ? req : null, signal: ac.signal });
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) res.setHeader(k, v);
    res.status(up.statusCode);
    // pipe(), not stream.pipeline(): pipeline() aborts an AbortController per call, building a DOMException with a
    // stack trace (~6% of CPU); the floor should be what a careful hand-written proxy costs.
    up.body.on('error', () => res.destroy());
    up.body.pipe(res);
  } catch {
    if (!res.headersSent) res.status(502).json({ error: { message: 'upstream failed', type: 'api_error', param: null, code: null } });
    else res.destroy();
  }
});
const server = app.listen(Number(values.port), values.host, () => {
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : values.port}\n`);
});
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => process.exit(0));
