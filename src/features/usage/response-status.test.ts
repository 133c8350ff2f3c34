import { describe, expect, it } from 'vitest';
import { ResponseStatus } from './response-status.js';

/** Feeds `text` in pieces of `size` bytes, as a socket may cut it. */
function read(text: string, isStream: boolean, size: number): ResponseStatus {
  const s = new ResponseStatus(isStream);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
  return s;
}

const response = (status: string) =>
  JSON.stringify({ id: 'resp_1', object: 'response', status, output: [{ type: 'message', status: 'in_progress', content: [] }], usage: null });

describe('ResponseStatus', () => {
  it("reads a Response object's top-level status, not its items', however the body is cut", () => {
    for (const size of [1, 7, 4096]) {
      expect(read(response('completed'), false, size)).toMatchObject({ status: 'completed', final: true });
      expect(read(response('in_progress'), false, size)).toMatchObject({ status: 'in_progress', final: false });
    }
    for (const s of ['incomplete', 'failed', 'cancelled']) expect(read(response(s), false, 64).final).toBe(true);
  });

  it('an answer it cannot read is never final, and never fails', () => {
    const huge = JSON.stringify({ id: 'resp_1', status: 'x'.repeat(20_000), usage: { input_tokens: 1 } });
    expect(read(huge, false, 1024)).toMatchObject({ final: false });
  });

  it("reads the last lifecycle event's response.status in a stream", () => {
    const event = (type: string, fields: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
    const stream =
      event('response.queued', { response: JSON.parse(response('queued')) }) +
      event('response.output_item.done', { item: { type: 'message', status: 'completed' } }) +
      event('response.completed', { response: JSON.parse(response('completed')) });
    for (const size of [3, 4096]) expect(read(stream, true, size)).toMatchObject({ status: 'completed', final: true });
    expect(read(event('response.in_progress', { response: JSON.parse(response('in_progress')) }), true, 10).final).toBe(false);
  });
});
