// Holds N streaming requests open at once (each on its own connection) so the runner can read the target's RSS
// under that load. Prints `READY <n>` once every stream has delivered its first event (or after 30 s with the
// count reached), keeps them open until SIGTERM, and gives up by itself after 90 s.
//
//   node --import tsx bench/open-streams.ts --url URL --body FILE --key KEY --streams 1000
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: { url: { type: 'string' }, body: { type: 'string' }, key: { type: 'string', default: '' }, streams: { type: 'string', default: '1000' } },
});
const n = Number(a.streams);
const body = readFileSync(a.body!);
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const requests: ReturnType<typeof request>[] = [];
let started = 0;
let failed = 0;
let reported = false;

const report = (): void => {
  if (reported) return;
  reported = true;
  process.stdout.write(`READY ${started} ${failed}\n`);
};

for (let i = 0; i < n; i++) {
  const req = request(a.url!, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}`, 'content-length': body.length },
  });
  req.on('response', (res) => {
    if (res.statusCode !== 200) failed++;
    res.once('data', () => {
      started++;
      if (started + failed >= n) report();
    });
    res.resume();
  });
  req.on('error', () => {
    failed++;
    if (started + failed >= n) report();
  });
  req.end(body);
  requests.push(req);
}

const stop = (): void => {
  for (const r of requests) r.destroy();
  process.exit(0);
};
setTimeout(report, 30_000).unref();
setTimeout(stop, 90_000).unref();
process.on('SIGTERM', stop);
// Keep the process alive while streams are open even if the timers above are unref'd.
setInterval(() => {}, 1_000);
