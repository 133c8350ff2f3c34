import { describe, expect, it } from 'vitest';
import { SseEvents, SseEventTooLarge } from './sse-events.js';

function read(chunks: string[], wants: (event: string) => boolean = () => true): [string | undefined, string][] {
  const out: [string | undefined, string][] = [];
  const events = new SseEvents(wants, (event, data) => out.push([event, data]));
  for (const c of chunks) events.push(Buffer.from(c));
  events.end();
  return out;
}

describe('SseEvents', () => {
  it('reads named and unnamed events, data lines joined, split anywhere across chunks and line ends', () => {
    const text = 'event: message_start\ndata: {"a":1}\n\ndata: {"b":\r\ndata: 2}\r\n\r\n: comment\ndata:[DONE]\n\n';
    const whole = read([text]);
    expect(whole).toEqual([
      ['message_start', '{"a":1}'],
      [undefined, '{"b":\n2}'],
      [undefined, '[DONE]'],
    ]);
    for (let i = 1; i < text.length; i++) expect(read([text.slice(0, i), text.slice(i)])).toEqual(whole);
  });

  it('skips the events it is not asked for, and drops an event the stream cut before its blank line', () => {
    const text = 'event: ping\ndata: {}\n\nevent: message_delta\ndata: {"usage":{}}\n\nevent: message_delta\ndata: {"cut';
    expect(read([text], (e) => e === 'message_delta')).toEqual([['message_delta', '{"usage":{}}']]);
  });

  it('fails on an event larger than it holds', () => {
    expect(() => read([`data: ${'x'.repeat(5 * 1024 * 1024)}`])).toThrow(SseEventTooLarge);
  });
});
