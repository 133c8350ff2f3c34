import { describe, expect, it } from 'vitest';
import { encodeMultipart, MultipartError, parseMultipart } from './multipart.js';

async function encodeWithFetch(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const req = new Request('http://x/', { method: 'POST', body: form });
  return { body: Buffer.from(await req.arrayBuffer()), contentType: req.headers.get('content-type')! };
}

async function decodeWithFetch(body: Buffer, contentType: string): Promise<FormData> {
  return new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
}

describe('multipart', () => {
  it('round-trips fields and files, rewriting only the model', async () => {
    const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 256));
    const form = new FormData();
    form.set('model', 'public');
    form.set('prompt', 'héllo\r\nworld');
    form.set('image', new Blob([bytes], { type: 'image/png' }), 'a "quoted"\nname.png');
    form.append('tags[]', 'one');
    form.append('tags[]', 'two');
    const { body, contentType } = await encodeWithFetch(form);

    const parsed = await parseMultipart(body, contentType);
    expect(parsed.model).toBe('public');
    expect(parsed.parts.map((p) => p.name)).toEqual(['model', 'prompt', 'image', 'tags[]', 'tags[]']);

    const out = encodeMultipart(parsed, 'upstream-name');
    const back = await decodeWithFetch(out.body, out.contentType);
    expect(back.get('model')).toBe('upstream-name');
    expect(back.get('prompt')).toBe('héllo\r\nworld');
    expect(back.getAll('tags[]')).toEqual(['one', 'two']);
    const file = back.get('image') as File;
    expect(file.type).toBe('image/png');
    expect(file.name).toBe('a "quoted"\nname.png');
    expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('gives a large file part as a view into the body, byte for byte, without copying it', async () => {
    const bytes = Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7 + (i >> 9)) % 256));
    const form = new FormData();
    form.set('model', 'm');
    form.set('file', new Blob([bytes], { type: 'audio/wav' }), 'a.wav');
    form.set('after', 'tail');
    const { body, contentType } = await encodeWithFetch(form);
    const parsed = await parseMultipart(body, contentType);
    const file = parsed.parts.find((p) => p.name === 'file')!.value as Buffer;
    expect(file.equals(bytes)).toBe(true);
    expect(file.buffer).toBe(body.buffer);
    expect(parsed.parts.find((p) => p.name === 'after')?.value).toBe('tail');
  });

  it('keeps fields larger than busboy’s 1 MiB default intact', async () => {
    const form = new FormData();
    form.set('model', 'm');
    form.set('prompt', 'p'.repeat(1_500_000));
    const { body, contentType } = await encodeWithFetch(form);
    const parsed = await parseMultipart(body, contentType);
    expect((parsed.parts[1]!.value as string).length).toBe(1_500_000);
  });

  describe('names and filenames keep the client’s bytes', () => {
    const raw = (disposition: Buffer) =>
      Buffer.concat([
        Buffer.from('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\npublic\r\n--b\r\nContent-Disposition: form-data; '),
        disposition,
        Buffer.from('\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--b--\r\n'),
      ]);
    const encoded = async (disposition: Buffer) => encodeMultipart(await parseMultipart(raw(disposition), 'multipart/form-data; boundary=b'), 'upstream');
    const reencoded = async (disposition: Buffer) => (await encoded(disposition)).body;

    it('a filename and a name that are not UTF-8', async () => {
      // Regression: read as UTF-8, the bytes ff fe 41 c3 reached the upstream as U+FFFD U+FFFD A U+FFFD.
      const filename = Buffer.from([0xff, 0xfe, 0x41, 0xc3]);
      const name = Buffer.from([0x66, 0xe9]);
      const out = await reencoded(Buffer.concat([Buffer.from('name="'), name, Buffer.from('"; filename="'), filename, Buffer.from('"')]));
      expect(out.includes(Buffer.concat([Buffer.from('name="'), name, Buffer.from('"; filename="'), filename, Buffer.from('"\r\n')]))).toBe(true);
    });

    it('a UTF-8 filename, as browsers and the SDKs send it', async () => {
      const filename = Buffer.from('录音 café.m4a', 'utf8');
      const out = await encoded(Buffer.concat([Buffer.from('name="file"; filename="'), filename, Buffer.from('"')]));
      expect(out.body.includes(Buffer.concat([Buffer.from('filename="'), filename, Buffer.from('"')]))).toBe(true);
      expect(((await decodeWithFetch(out.body, out.contentType)).get('file') as File).name).toBe('录音 café.m4a');
    });

    it.each([
      ['café.wav', "UTF-8''caf%C3%A9.wav"],
      ['€ 录音.wav', "utf-8''%E2%82%AC%20%E5%BD%95%E9%9F%B3.wav"],
      ['café.wav', "iso-8859-1''caf%E9.wav"],
    ])('an RFC 5987 filename* (%s) goes on as that name in UTF-8', async (name, param) => {
      const out = await reencoded(Buffer.from(`name="file"; filename*=${param}`));
      expect(out.includes(Buffer.from(`filename="${name}"`, 'utf8'))).toBe(true);
    });

    it('a plain filename beside an RFC 5987 one keeps its bytes', async () => {
      const plain = Buffer.from([0xff, 0xfe, 0x41, 0xc3]);
      const body = Buffer.concat([
        raw(Buffer.from('name="a"; filename*=UTF-8\'\'caf%C3%A9.wav')).subarray(0, -'--b--\r\n'.length),
        Buffer.from('--b\r\nContent-Disposition: form-data; name="b"; filename="'),
        plain,
        Buffer.from('"\r\n\r\nRIFF\r\n--b--\r\n'),
      ]);
      const out = encodeMultipart(await parseMultipart(body, 'multipart/form-data; boundary=b'), 'upstream').body;
      expect(out.includes(Buffer.from('name="a"; filename="café.wav"', 'utf8'))).toBe(true);
      expect(out.includes(Buffer.concat([Buffer.from('name="b"; filename="'), plain, Buffer.from('"')]))).toBe(true);
    });
  });

  it('rejects a body that is not multipart', async () => {
    await expect(parseMultipart(Buffer.from('nope'), 'multipart/form-data')).rejects.toBeInstanceOf(MultipartError);
  });

  it('reports no model when the field is absent', async () => {
    const form = new FormData();
    form.set('file', new Blob(['x']), 'x.wav');
    const { body, contentType } = await encodeWithFetch(form);
    expect((await parseMultipart(body, contentType)).model).toBeUndefined();
  });
});
