import { describe, expect, it } from 'vitest';
import { inputItemsPage } from './input-items-page.js';

const HEX = '0123456789abcdef0123456789abcdef';
const INPUT = [
  { role: 'user', content: 'Weather in Paris?' },
  { type: 'message', role: 'assistant', content: 'Let me check.' },
  { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
  { type: 'message', id: 'msg_own', role: 'user', content: [{ type: 'input_text', text: 'Thanks.' }] },
];

describe('inputItemsPage', () => {
  it('lists the items newest first by default, each with an id, messages as content parts with a status', () => {
    const page = inputItemsPage(`resp_${HEX}`, INPUT, {});
    expect(page).toEqual({
      object: 'list',
      data: [
        { type: 'message', id: 'msg_own', role: 'user', content: [{ type: 'input_text', text: 'Thanks.' }], status: 'completed' },
        { type: 'function_call_output', id: `fco_${HEX}_in2`, call_id: 'call_1', output: 'sunny' },
        { type: 'message', id: `msg_${HEX}_in1`, role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.' }], status: 'completed' },
        { type: 'message', id: `msg_${HEX}_in0`, role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }], status: 'completed' },
      ],
      first_id: 'msg_own',
      last_id: `msg_${HEX}_in0`,
      has_more: false,
    });
  });

  it('pages by limit and after, in either order; an unknown cursor lists nothing', () => {
    const first = inputItemsPage(`resp_${HEX}`, INPUT, { order: 'asc', limit: '2' });
    expect(first.data.map((i) => i['id'])).toEqual([`msg_${HEX}_in0`, `msg_${HEX}_in1`]);
    expect(first.has_more).toBe(true);
    const next = inputItemsPage(`resp_${HEX}`, INPUT, { order: 'asc', limit: '2', after: first.last_id });
    expect(next.data.map((i) => i['id'])).toEqual([`fco_${HEX}_in2`, 'msg_own']);
    expect(next.has_more).toBe(false);
    expect(inputItemsPage(`resp_${HEX}`, INPUT, { after: 'msg_nope' })).toMatchObject({ data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses a limit outside 1 to 100 and an order other than asc or desc, in OpenAI’s shape', () => {
    for (const limit of ['0', '101', 'ten', '2.5']) {
      expect(() => inputItemsPage(`resp_${HEX}`, INPUT, { limit })).toThrow(expect.objectContaining({ status: 400, param: 'limit' }));
    }
    expect(() => inputItemsPage(`resp_${HEX}`, INPUT, { order: 'newest' })).toThrow(expect.objectContaining({ status: 400, param: 'order' }));
  });
});
