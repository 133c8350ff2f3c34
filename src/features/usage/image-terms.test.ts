import { describe, expect, it } from 'vitest';
import { statedImageTerms } from './image-terms.js';

const tail = (text: string) => Buffer.from(text, 'utf8');

describe('statedImageTerms', () => {
  it("reads a JSON answer's top-level size and quality after its images", () => {
    const body = JSON.stringify({ created: 1, data: [{ b64_json: 'AAAA', revised_prompt: 'a "size": "tiny" cat' }], quality: 'high', size: '1536x1024' });
    expect(statedImageTerms(tail(body))).toEqual({ size: '1536x1024', quality: 'high' });
  });

  it("takes a stream's last event: the completed image, not a preview before it", () => {
    const events = [
      { type: 'image_generation.partial_image', quality: 'medium', size: '1024x1024' },
      { type: 'image_generation.completed', quality: 'low', size: '1024x1536' },
    ];
    expect(statedImageTerms(tail(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')))).toEqual({ size: '1024x1536', quality: 'low' });
  });

  it('states nothing where the answer does not, or where the value is no size or quality', () => {
    expect(statedImageTerms(tail('{"created":1,"data":[{"url":"https://x/a.png"}]}'))).toEqual({});
    expect(statedImageTerms(tail('{"size": 1024, "quality": "a b"}'))).toEqual({});
    expect(statedImageTerms(tail('{"size" : "256x256"}'))).toEqual({ size: '256x256' });
  });
});
