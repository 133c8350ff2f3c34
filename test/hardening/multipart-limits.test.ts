// Multipart parsing cannot be turned into a CPU or memory weapon: a cap on the number of parts, and a
// parse that yields to the event loop so one large upload does not stall every other request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PARTS, parseMultipart } from '../../src/dataplane/request/multipart.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAIError } from './support.js';

const CT = 'multipart/form-data; boundary=xyz';
const field = (name: string, value: string) => `--xyz\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const form = (fields: number) => Buffer.from(`${field('model', 'whisper-1') + field('f', 'v').repeat(fields)}--xyz--\r\n`);

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL), { bodyLimits: { jsonBytes: 1 << 20, multipartBytes: 32 << 20 } });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function upload(body: Buffer) {
  const res = await fetch(`${gw.baseURL}/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': CT },
    body: new Uint8Array(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

describe('multipart limits', () => {
  it(`${MAX_PARTS} parts pass; one more → 400 that names the limit, nothing forwarded`, async () => {
    expect((await upload(form(MAX_PARTS - 1))).status).toBe(200);
    const before = upstream.requests.length;
    const r = await upload(form(MAX_PARTS));
    expectOpenAIError(r, 400, 'invalid_multipart');
    expect(r.json.error.message).toContain(`more than ${MAX_PARTS} parts`);
    expect(upstream.requests.length).toBe(before);
  });

  it('400,000 tiny parts (20 MB) are refused quickly', async () => {
    // Regression: with no cap this took ~6 s of CPU in one go and ~130 MB of part objects.
    const started = Date.now();
    const r = await upload(form(400_000));
    expectOpenAIError(r, 400, 'invalid_multipart');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('parsing a large body yields to the event loop', async () => {
    // Dashes are the slow case for the boundary search. Regression: the whole body was parsed in one
    // synchronous write, so nothing else (health checks, other streams) ran for seconds on a 100 MB upload.
    const file = Buffer.alloc(8 << 20, 0x2d);
    const body = Buffer.concat([
      Buffer.from(`${field('model', 'm')}--xyz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n`),
      file,
      Buffer.from('\r\n--xyz--\r\n'),
    ]);
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const parsed = await parseMultipart(body, CT);
    ticking = false;
    expect((parsed.parts[1]!.value as Buffer).equals(file)).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(16);
  });
});
