import { describe, expect, it } from 'vitest';
import { referencedIds, resolveReferences, responsesOf } from './item-references.js';
import type { KeptResponse } from './kept-responses.js';

const HEX = 'abcdef0123456789abcdef0123456789';
const ref = (id: string) => ({ type: 'item_reference', id });

describe('item references', () => {
  it('names the referenced ids, reasoning items aside, and the responses they came from, each once', () => {
    const ids = referencedIds({
      input: [{ role: 'user', content: 'hi' }, ref(`msg_${HEX}_0`), ref(`rs_${HEX}_1`), ref(`fc_${HEX}_2`), ref('msg_other'), { type: 'item_reference' }],
    });
    expect(ids).toEqual([`msg_${HEX}_0`, `fc_${HEX}_2`, 'msg_other']);
    expect(responsesOf(ids)).toEqual([`resp_${HEX}`]);
    expect(referencedIds({ input: 'hi' })).toEqual([]);
    expect(referencedIds(null)).toEqual([]);
  });

  it('replaces each reference to an item of a found response by the item, in place, and leaves the others for the translation', () => {
    const message = { type: 'message', id: `msg_${HEX}_0`, role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] };
    const found = new Map<string, KeptResponse>([[`resp_${HEX}`, { id: `resp_${HEX}`, input: [], response: { output: [message] } }]]);
    const body = { input: [{ role: 'user', content: 'hi' }, ref(`msg_${HEX}_0`), ref(`msg_${HEX}_5`), ref('msg_gone'), ref(`rs_${HEX}_1`)] };
    resolveReferences(body, found);
    expect(body.input).toEqual([{ role: 'user', content: 'hi' }, message, ref(`msg_${HEX}_5`), ref('msg_gone'), ref(`rs_${HEX}_1`)]);
  });
});
