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

  it('a part without a filename reaches the upstream byte for byte, whatever its bytes and headers', async () => {
    // Regression: busboy decoded it as UTF-8 text, so ff fe 00 80 arrived as ef bf bd ef bf bd 00 ef bf bd.
    // Not all 256 byte values (the unit tests have those): the fake upstream's parser, undici's, refuses some.
    const all = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x52, 0x49, 0x46, 0x46, 0x0d, 0xc3]);
    const parts = [
      Buffer.concat([Buffer.from('--xyz\r\nContent-Disposition: form-data; name="file"\r\nContent-Type: audio/wav\r\n\r\n'), all]),
      Buffer.from('--xyz\r\nContent-Disposition: form-data; name="prompt"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhéllo 録音', 'utf8'),
      Buffer.from('--xyz\r\nContent-Disposition: form-data; name="language"\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\nfran\xe7ais', 'latin1'),
      Buffer.concat([Buffer.from('--xyz\r\nContent-Disposition: form-data; name="raw"\r\n\r\n'), Buffer.from([0xff, 0xc3, 0x28, 0x80])]),
    ];
    const body = Buffer.concat([
      Buffer.from('--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n'),
      ...parts.flatMap((p) => [p, Buffer.from('\r\n')]),
      Buffer.from('--xyz--\r\n'),
    ]);
    const res = await fetch(`${gw.baseURL}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: new Uint8Array(body),
    });
    expect(res.status).toBe(200);
    const seen = upstream.requests.at(-1)!.body;
    expect(seen.includes(Buffer.from('upstream-whisper'))).toBe(true);
    for (const p of parts) expect(seen.includes(Buffer.concat([p, Buffer.from('\r\n--')]))).toBe(true);
  });
});
