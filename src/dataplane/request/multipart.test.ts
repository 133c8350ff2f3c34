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

    it('an RFC 5987 filename* goes on as sent, as it does when the model is not renamed', async () => {
      const param = Buffer.from('name="file"; filename*=iso-8859-1\'\'caf%E9.wav; filename="caf\xe9.wav"', 'latin1');
      expect((await reencoded(param)).includes(param)).toBe(true);
    });
  });

  describe('every part but the model reaches the upstream byte for byte', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const part = (head: string, value: Buffer) => Buffer.concat([Buffer.from(`--b\r\n${head}\r\n\r\n`, 'latin1'), value, Buffer.from('\r\n')]);
    const form = (...parts: Buffer[]) =>
      Buffer.concat([part('Content-Disposition: form-data; name="model"', Buffer.from('public')), ...parts, Buffer.from('--b--\r\n')]);
    const reencode = async (body: Buffer) => encodeMultipart(await parseMultipart(body, 'multipart/form-data; boundary=b'), 'upstream').body;

    it.each([
      // Regression: a part without a filename was decoded as UTF-8 text, so ff fe 00 80 went on as ef bf bd ef bf bd 00 ef bf bd.
      ['binary, no filename', 'Content-Disposition: form-data; name="file"\r\nContent-Type: audio/wav', all],
      ['binary, no filename, no content type', 'Content-Disposition: form-data; name="file"', all],
      [
        'text declaring charset=utf-8',
        'Content-Disposition: form-data; name="prompt"\r\nContent-Type: text/plain; charset=utf-8',
        Buffer.from('héllo 录音 €', 'utf8'),
      ],
      [
        'text declaring charset=iso-8859-1',
        'Content-Disposition: form-data; name="prompt"\r\nContent-Type: text/plain; charset=iso-8859-1',
        Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      ],
      [
        'invalid UTF-8 declaring charset=utf-8',
        'Content-Disposition: form-data; name="prompt"\r\ncontent-type:TEXT/plain;charset="UTF-8"',
        Buffer.from([0xff, 0xc3, 0x28]),
      ],
      ['a field with other headers', 'Content-Disposition: form-data; name="x"\r\nContent-Transfer-Encoding: binary\r\nX-Extra:  kept', all],
    ])('%s', async (_what, head, value) => {
      const kept = part(head, value);
      const out = await reencode(form(kept, part('Content-Disposition: form-data; name="after"', Buffer.from('tail'))));
      expect(
        out.equals(
          Buffer.concat([
            part('Content-Disposition: form-data; name="model"', Buffer.from('upstream')),
            kept,
            part('Content-Disposition: form-data; name="after"', Buffer.from('tail')),
            Buffer.from('--b--\r\n'),
          ]),
        ),
      ).toBe(true);
    });

    it('reads the model as UTF-8 text, and only it is replaced', async () => {
      const body = Buffer.concat([
        Buffer.from('preamble\r\n'),
        part('Content-Disposition: form-data; name="model"', Buffer.from('modèle', 'utf8')),
        part('Content-Disposition: form-data; name="file"; filename="a"', all),
        Buffer.from('--b--\r\nepilogue'),
      ]);
      const parsed = await parseMultipart(body, 'multipart/form-data; boundary=b');
      expect(parsed.model).toBe('modèle');
      const out = encodeMultipart(parsed, 'up').body;
      expect(out.equals(Buffer.from(body.toString('latin1').replace(Buffer.from('modèle').toString('latin1'), 'up'), 'latin1'))).toBe(true);
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
