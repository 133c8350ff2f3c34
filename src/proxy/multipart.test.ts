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
