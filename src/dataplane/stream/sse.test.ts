import { describe, expect, it } from 'vitest';
import { AnswerTail, FirstChunk, type SseLineReader, SseSplitter } from './sse.js';

/** Lines and event ends as a reader sees them, from chunks cut at the given places. */
function read(chunks: readonly string[]): { lines: string[]; events: number; ends: string[] } {
  const out = { lines: [] as string[], events: 0, ends: [] as string[] };
  let line = '';
  const reader: SseLineReader = {
    lineBytes: (chunk, from, to) => void (line += chunk.toString('utf8', from, to)),
    lineEnd: (chunk, at, next, blank, completes) => {
      out.ends.push(JSON.stringify(chunk.toString('latin1', at, next)) + (completes ? '+' : ''));
      if (completes) return;
      if (blank) out.events++;
      else out.lines.push(line);
      line = '';
    },
  };
  const s = new SseSplitter();
  for (const c of chunks) s.push(Buffer.from(c), reader);
  return out;
}

const STREAM = (eol: string) => `event: a${eol}data: 1${eol}${eol}data: 2${eol}${eol}`;

describe('SseSplitter', () => {
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('reads lines and events ended by %s, whole and cut at every byte', (_name, eol) => {
    const text = STREAM(eol);
    const whole = read([text]);
    expect(whole.lines).toEqual(['event: a', 'data: 1', 'data: 2']);
    expect(whole.events).toBe(2);
    for (let cut = 1; cut < text.length; cut++) {
      const parts = read([text.slice(0, cut), text.slice(cut)]);
      expect({ lines: parts.lines, events: parts.events }, `cut at ${cut}`).toEqual({ lines: whole.lines, events: whole.events });
    }
  });

  it('a CRLF split across chunks: the CR ends the line, the LF is reported as completing it (blank or not)', () => {
    expect(read(['data: 1\r', '\n\r', '\ndata: 2\n\n']).ends).toEqual(['"\\r"', '"\\n"+', '"\\r"', '"\\n"+', '"\\n"', '"\\n"']);
    // Mixed line ends in one event, and an LF after a CR that did not end the previous chunk is a line end of its own.
    const mixed = read(['data: a\r\ndata: b\rdata: c\n\r\n']);
    expect(mixed.lines).toEqual(['data: a', 'data: b', 'data: c']);
    expect(mixed.events).toBe(1);
  });

  it('a line in many pieces, and an empty chunk between them', () => {
    const r = read(['da', '', 'ta: {"x"', ':1}', '\n', '\n']);
    expect(r.lines).toEqual(['data: {"x":1}']);
    expect(r.events).toBe(1);
  });
});

describe('FirstChunk', () => {
  it('is true once', () => {
    const f = new FirstChunk();
    expect([f.now(), f.now(), f.now()]).toEqual([true, false, false]);
  });
});

describe('AnswerTail', () => {
  it('keeps everything up to keepAll, then the last 32 KiB', () => {
    const t = new AnswerTail(0);
    for (let i = 0; i < 100; i++) t.push(Buffer.from(`${String(i).padStart(1023, '.')}\n`));
    expect(t.total).toBe(100 * 1024);
    expect(t.tail().length).toBe(32 * 1024);
    expect(t.tail().toString().endsWith('99\n')).toBe(true);
  });
});
