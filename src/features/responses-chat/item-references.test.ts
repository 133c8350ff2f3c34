import { describe, expect, it } from 'vitest';
import { referencedIds, resolveReferences } from './item-references.js';

const ref = (id: string) => ({ type: 'item_reference', id });

describe('item references', () => {
  it('names the referenced ids, reasoning items aside', () => {
    expect(referencedIds({ input: [{ role: 'user', content: 'hi' }, ref('msg_1'), ref('rs_1'), ref('fc_2'), { type: 'item_reference' }] })).toEqual([
      'msg_1',
      'fc_2',
    ]);
    expect(referencedIds({ input: 'hi' })).toEqual([]);
    expect(referencedIds(null)).toEqual([]);
  });

  it('replaces each reference to a found item by it, in place, and leaves the others for the translation', () => {
    const kept = { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] };
    const body = { input: [{ role: 'user', content: 'hi' }, ref('msg_1'), ref('msg_gone'), ref('rs_1')] };
    resolveReferences(body, new Map([['msg_1', kept]]));
    expect(body.input).toEqual([{ role: 'user', content: 'hi' }, kept, ref('msg_gone'), ref('rs_1')]);
  });
});
