import { describe, expect, it } from 'vitest';
import { ImageCounter } from './image-count.js';

const count = (stream: boolean, text: string, cut: number[]) => {
  const c = new ImageCounter(stream);
  const bytes = Buffer.from(text);
  let from = 0;
  for (const at of [...cut, bytes.length]) {
    c.push(bytes.subarray(from, at));
    from = at;
  }
  return c.count;
};

describe('image count', () => {
  const json = JSON.stringify({
    created: 1,
    data: [{ b64_json: 'aGk=', revised_prompt: 'a "url" in \\"quotes\\"' }, { url: 'https://x/1.png' }, { b64_json: 'aGk=' }],
    usage: { input_tokens: 5 },
  });

  it('counts the entries of data, a key split across chunks once, an escaped key in a prompt not at all', () => {
    expect(count(false, json, [])).toBe(3);
    for (let at = 1; at < json.length; at++) expect(count(false, json, [at])).toBe(3);
    expect(
      count(
        false,
        json,
        Array.from({ length: json.length - 1 }, (_, i) => i + 1),
      ),
    ).toBe(3);
  });

  it('counts the completed events of a stream, not the partial images', () => {
    const sse = [
      'event: image_generation.partial_image\ndata: {"type":"image_generation.partial_image","b64_json":"aGk="}\n\n',
      'event: image_generation.completed\ndata: {"type":"image_generation.completed","b64_json":"aGk="}\n\n',
      'event: image_generation.completed\ndata: {"type":"image_generation.completed","b64_json":"aGk="}\n\n',
    ].join('');
    expect(count(true, sse, [120, 121, 200])).toBe(2);
  });
});

describe('image count of an answer that writes the other field as null', () => {
  const json = JSON.stringify({ data: [0, 1, 2].map(() => ({ b64_json: 'aGk=', url: null, revised_prompt: null })) }).replaceAll(':', ' : ');

  it('counts each image once, however the bytes are cut', () => {
    expect(count(false, json, [])).toBe(3);
    for (let at = 1; at < json.length; at++) expect(count(false, json, [at])).toBe(3);
    expect(
      count(
        false,
        json,
        Array.from({ length: json.length - 1 }, (_, i) => i + 1),
      ),
    ).toBe(3);
  });

  it('a key quoted inside a string (a revised prompt) is no key, wherever the bytes are cut', () => {
    const text = '{"data":[{"url":"https://x/1.png","revised_prompt":"say \\"url\\": \\"y\\""}]}';
    for (let at = 1; at < text.length; at++) expect(count(false, text, [at]), `cut at ${at}`).toBe(1);
  });
});
