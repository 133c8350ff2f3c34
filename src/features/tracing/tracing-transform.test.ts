import { describe, expect, it } from 'vitest';
import { lastModel } from './tracing-transform.js';

describe('lastModel', () => {
  it('reads the model an answer names, the last one in an event stream', () => {
    expect(lastModel('{"id":"x","model": "gpt-4o-mini-2024-07-18","choices":[]}')).toBe('gpt-4o-mini-2024-07-18');
    expect(lastModel('data: {"model":"a"}\n\ndata: {"model":"b"}\n\ndata: [DONE]\n\n')).toBe('b');
  });

  it('finds none in a body without one, and ignores values too long or escaped to be a model name', () => {
    expect(lastModel('{"data":[{"embedding":[0.1]}]}')).toBeUndefined();
    expect(lastModel(`{"model":"${'m'.repeat(300)}"}`)).toBeUndefined();
    expect(lastModel('{"model":"a\\"b"}')).toBeUndefined();
  });

  it('passes over later "model" keys whose value is no model name, to the last one that is', () => {
    expect(lastModel('{"model":"a","meta":{"model":null},"note":"model","m":{"model":"x\\"y"}}')).toBe('a');
    expect(lastModel('"model"')).toBeUndefined();
  });
});
