import { describe, expect, it } from 'vitest';
import { streamOptionsWithUsage, UsageChunkFilter } from './include-usage.js';

describe('streamOptionsWithUsage', () => {
  it('asks for usage, keeping the options the client set', () => {
    expect(streamOptionsWithUsage(undefined)).toBe('{"include_usage":true}');
    expect(streamOptionsWithUsage('null')).toBe('{"include_usage":true}');
    expect(streamOptionsWithUsage('{"include_usage":false,"include_obfuscation":false}')).toBe('{"include_usage":true,"include_obfuscation":false}');
  });

  it('leaves alone a client that asked already, or sent something the upstream should refuse', () => {
    expect(streamOptionsWithUsage('{"include_usage": true}')).toBeUndefined();
    expect(streamOptionsWithUsage('"yes"')).toBeUndefined();
    expect(streamOptionsWithUsage('[1]')).toBeUndefined();
  });
});

const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const content = chunk({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' } }], usage: null });
const usageOnly = chunk({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2 } });
/** The content chunk as the client gets it: without the "usage": null that asking for usage added. */
const contentOut = content.replace(',"usage":null', '');

async function filter(pieces: readonly string[]): Promise<{ out: string; usage: unknown[] }> {
  const usage: unknown[] = [];
  const f = new UsageChunkFilter((u) => usage.push(u));
  const out = [...pieces.map((p) => f.push(Buffer.from(p))), f.end()];
  return { out: Buffer.concat(out).toString(), usage };
}

describe('UsageChunkFilter', () => {
  it('drops the usage-only chunk and hands over its usage, and the null usage of the others; every other byte passes as it came', async () => {
    const { out, usage } = await filter([content, content, usageOnly, 'data: [DONE]\n\n']);
    expect(contentOut).not.toContain('usage');
    expect(out).toBe(`${contentOut}${contentOut}data: [DONE]\n\n`);
    expect(usage).toEqual([{ prompt_tokens: 9, completion_tokens: 2 }]);
  });

  it('finds events split anywhere across chunks, in every line-end style', async () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const stream = [content, usageOnly, 'data: [DONE]\n\n'].map((e) => e.replaceAll('\n', eol)).join('');
      for (const size of [1, 3, 7, 64]) {
        const pieces: string[] = [];
        for (let i = 0; i < stream.length; i += size) pieces.push(stream.slice(i, i + size));
        const { out, usage } = await filter(pieces);
        expect(out).toBe(`${contentOut}data: [DONE]\n\n`.replaceAll('\n', eol));
        expect(usage).toHaveLength(1);
      }
    }
  });

  it('holds no more than 16 KiB of an event: a longer one (or a stream without events) goes on as it arrives', async () => {
    const usage: unknown[] = [];
    const filter = new UsageChunkFilter((u) => usage.push(u));
    const out: Buffer[] = [];
    for (let i = 0; i < 10; i++) out.push(filter.push(Buffer.alloc(8 * 1024, 0x61)));
    const passed = out.reduce((n, b) => n + b.length, 0);
    expect(passed).toBeGreaterThanOrEqual(10 * 8 * 1024 - 16 * 1024);
    out.push(filter.push(Buffer.from(`\n\n${usageOnly}`)), filter.end());
    expect(Buffer.concat(out).toString()).toBe(`${'a'.repeat(80 * 1024)}\n\n`);
    expect(usage).toHaveLength(1);
  });

  it('takes out the null usage of an event longer than it holds (a large delta), at its end or first, split anywhere', async () => {
    const big = 'é'.repeat(20 * 1024);
    const last = `data: {"id":"c","choices":[{"index":0,"delta":{"content":"${big}"}}],"usage":null,"obfuscation":"x"}\r\n\r\n`;
    const first = `data: {"usage": null, "id": "c", "choices": [{"index": 0, "delta": {"content": "${big}"}}]}\n\n`;
    const stream = Buffer.from(`${last}${first}${usageOnly}data: [DONE]\n\n`);
    for (const size of [1000, 4096, 65536]) {
      const usage: unknown[] = [];
      const f = new UsageChunkFilter((u) => usage.push(u));
      const out: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) out.push(f.push(stream.subarray(i, i + size)));
      out.push(f.end());
      expect(Buffer.concat(out).toString()).toBe(`${last.replace(',"usage":null', '')}${first.replace('"usage": null, ', '')}data: [DONE]\n\n`);
      expect(usage).toHaveLength(1);
    }
  });

  it('takes out a null usage written first, or with spaces (Python servers), and leaves text that only quotes one', async () => {
    const { out } = await filter([
      'data: {"usage": null, "id": "c", "choices": [{"delta": {"content": "a"}}]}\n\n',
      'data: {"id": "c", "choices": [{"delta": {"content": "b"}}], "usage": null}\n\n',
      `data: ${JSON.stringify({ choices: [{ delta: { content: 'say "usage":null, please' } }] })}\n\n`,
    ]);
    expect(out).toBe(
      'data: {"id": "c", "choices": [{"delta": {"content": "a"}}]}\n\n' +
        'data: {"id": "c", "choices": [{"delta": {"content": "b"}}]}\n\n' +
        `data: ${JSON.stringify({ choices: [{ delta: { content: 'say "usage":null, please' } }] })}\n\n`,
    );
  });

  it("cuts OpenAI's compact null usage from the bytes, before a } or a comma, leaving every other byte as it came", async () => {
    const f = new UsageChunkFilter(() => {});
    const accents = Buffer.from('data: {"choices":[{"delta":{"content":"héllo ✓"}}],"usage":null}\n\n');
    expect(f.push(accents).toString()).toBe('data: {"choices":[{"delta":{"content":"héllo ✓"}}]}\n\n');
    const middle = Buffer.from('data: {"id":"c","usage":null,"choices":[]}\n\n');
    expect(f.push(middle).toString()).toBe('data: {"id":"c","choices":[]}\n\n');
    // Bytes that are not UTF-8 (no decoding on this path) pass unchanged around the cut.
    const raw = Buffer.concat([Buffer.from('data: {"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","usage":null}\n\n')]);
    expect([...f.push(raw)]).toEqual([...Buffer.concat([Buffer.from('data: {"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n\n')])]);
  });

  it('keeps a chunk that has choices and usage both, and a comment or unfinished event', async () => {
    const both = chunk({ choices: [{ index: 0, delta: {} }], usage: { prompt_tokens: 1 } });
    const { out, usage } = await filter([': keep-alive\n\n', both, 'data: {"choices":[],"usa']);
    expect(out).toBe(`: keep-alive\n\n${both}data: {"choices":[],"usa`);
    expect(usage).toEqual([]);
  });

  it('passes a chunk that is one whole event on as the same Buffer (no copy, no view)', () => {
    const f = new UsageChunkFilter(() => {});
    const event = Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n');
    expect(f.push(event)).toBe(event);
  });
});
