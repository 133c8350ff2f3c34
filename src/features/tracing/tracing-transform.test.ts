import { describe, expect, it } from 'vitest';
import { lastModel } from './tracing-transform.js';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('lastModel', () => {
  it('reads the model an answer names, the last one in an event stream', () => {
    expect(lastModel(b('{"id":"x","model": "gpt-4o-mini-2024-07-18","choices":[]}'))).toBe('gpt-4o-mini-2024-07-18');
    expect(lastModel(b('data: {"model":"a"}\n\ndata: {"model":"b"}\n\ndata: [DONE]\n\n'))).toBe('b');
  });

  it('finds none in a body without one, and ignores values too long or escaped to be a model name', () => {
    expect(lastModel(b('{"data":[{"embedding":[0.1]}]}'))).toBeUndefined();
    expect(lastModel(b(`{"model":"${'m'.repeat(300)}"}`))).toBeUndefined();
    expect(lastModel(b('{"model":"a\\"b"}'))).toBeUndefined();
  });

  it('passes over later "model" keys whose value is no model name, to the last one that is', () => {
    expect(lastModel(b('{"model":"a","meta":{"model":null},"note":"model","m":{"model":"x\\"y"}}'))).toBe('a');
    expect(lastModel(b('"model"'))).toBeUndefined();
  });

  it('reads the bytes: multi-byte names up to 256 characters, JSON whitespace, and no name cut off at the end', () => {
    expect(lastModel(b(`{"model" :\n\t"${'模'.repeat(256)}"}`))).toBe('模'.repeat(256));
    expect(lastModel(b(`{"model":"${'模'.repeat(257)}"}`))).toBeUndefined();
    expect(lastModel(b(`{"model":"${'m'.repeat(256)}"}`))).toBe('m'.repeat(256));
    expect(lastModel(b('{"model":"a"} {"model":"cut'))).toBe('a');
    expect(lastModel(b('{"model":""}'))).toBeUndefined();
  });
});
