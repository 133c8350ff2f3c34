// A form whose model is rewritten is re-encoded; the filenames (and part names) in it must reach the upstream
// as the bytes the client sent, whatever their encoding: upstreams and their users key files by name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

function form(filename: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from('--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n'),
    Buffer.from('--xyz\r\nContent-Disposition: form-data; name="file"; filename="'),
    filename,
    Buffer.from('"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--xyz--\r\n'),
  ]);
}

describe('multipart filenames', () => {
  it.each([
    ['not UTF-8 (ff fe 41 c3)', Buffer.from([0xff, 0xfe, 0x41, 0xc3])],
    ['UTF-8', Buffer.from('запись 録音.wav', 'utf8')],
  ])('a filename that is %s reaches the upstream byte for byte', async (_name, filename) => {
    // Regression: busboy decoded the filename as UTF-8, so ff fe 41 c3 arrived as U+FFFD U+FFFD A U+FFFD.
    const res = await fetch(`${gw.baseURL}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: new Uint8Array(form(filename)),
    });
    expect(res.status).toBe(200);
    const seen = upstream.requests.at(-1)!.body;
    // Re-encoded (the backend's model name differs), with the client's filename bytes inside.
    expect(seen.includes(Buffer.from('upstream-whisper'))).toBe(true);
    expect(seen.includes(Buffer.concat([Buffer.from('filename="'), filename, Buffer.from('"\r\n')]))).toBe(true);
  });
});
