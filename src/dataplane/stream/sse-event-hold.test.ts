import { describe, expect, it } from 'vitest';
import { SseEventHold } from './sse-event-hold.js';

/** What goes out after each chunk, as text. */
function pushAll(hold: SseEventHold, chunks: readonly string[]): string[] {
  return chunks.map((c) => hold.push(Buffer.from(c, 'latin1')).toString('latin1'));
}

describe('SseEventHold', () => {
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('passes complete events (%s) and holds a partial one, at every cut', (_name, eol) => {
    const text = `event: a${eol}data: {"x":1}${eol}${eol}data: {"y":2}${eol}${eol}data: {"z"`;
    const complete = text.slice(0, text.lastIndexOf(eol + eol) + 2 * eol.length);
    for (let cut = 0; cut <= text.length; cut++) {
      const hold = new SseEventHold();
      const out = pushAll(hold, [text.slice(0, cut), text.slice(cut)]).join('');
      // A CR alone may end a line: the LF of a CRLF cut after its CR is what a later chunk completes.
      expect(out, `cut at ${cut}`).toBe(complete);
      expect(hold.atBoundary).toBe(true);
      expect(hold.end().toString('latin1')).toBe(text.slice(complete.length));
    }
  });

  it('comment lines (keep-alives) go out at once, unless they follow a field of the event', () => {
    const hold = new SseEventHold();
    expect(pushAll(hold, [': ping\n', ': ping\r\ndata: 1', '\n: x\n', '\n'])).toEqual([': ping\n', ': ping\r\n', '', 'data: 1\n: x\n\n']);
  });

  it('a whole chunk of complete events goes out as the same buffer (no copy)', () => {
    const hold = new SseEventHold();
    const chunk = Buffer.from('data: 1\n\ndata: 2\n\n');
    expect(hold.push(chunk)).toBe(chunk);
  });

  it('an event larger than the hold goes out as it comes and is no longer at a boundary until it ends', () => {
    const hold = new SseEventHold(8);
    expect(pushAll(hold, ['data: 12', '3'])).toEqual(['', 'data: 123']);
    expect(hold.atBoundary).toBe(false);
    expect(pushAll(hold, ['45', '6\n\ndata: 7'])).toEqual(['45', '6\n\n']);
    expect(hold.atBoundary).toBe(true);
    expect(hold.end().toString()).toBe('data: 7');
  });

  it('any chunking of a stream with mixed line ends lets out exactly its complete events, in order', () => {
    // Where output may stop: after the line end of a blank line or of a comment outside an event (the CR of a CRLF
    // counts: a CR may end a line before its LF comes).
    const BOUNDARIES = new Set([0, 5, 6, 15, 35, 36, 41, 42, 51, 60, 61]);
    const text = ': ka\r\ndata: 1\n\nevent: e\r\ndata: 2\r\n\r\n: ka\n\ndata: 3\r\rdata: 4\n\r\ndata: 5';
    const complete = text.slice(0, text.lastIndexOf('data: 5'));
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let run = 0; run < 500; run++) {
      const chunks: string[] = [];
      for (let at = 0; at < text.length; ) {
        const size = 1 + Math.floor(random() * 12);
        chunks.push(text.slice(at, at + size));
        at += size;
      }
      const hold = new SseEventHold();
      const outs = pushAll(hold, chunks);
      // After every chunk, what went out so far ends where an event (or a comment line) ends, never inside one.
      let sent = 0;
      for (const out of outs) {
        sent += out.length;
        expect(BOUNDARIES.has(sent), `${sent} in ${JSON.stringify(chunks)}`).toBe(true);
      }
      expect(outs.join(''), JSON.stringify(chunks)).toBe(complete);
      expect(hold.end().toString('latin1')).toBe('data: 5');
    }
  });
});
