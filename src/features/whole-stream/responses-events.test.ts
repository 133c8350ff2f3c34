import { describe, expect, it } from 'vitest';
import { responseEvents } from './responses-events.js';

function events(text: string): { type: string; sequence_number: number; [k: string]: unknown }[] {
  return [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
}

const message = { id: 'msg', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] };
const reasoning = { id: 'rs', type: 'reasoning', summary: [] };

describe('responseEvents', () => {
  it('numbers every event and ends with the status’s own terminal event carrying the whole response', () => {
    const response = { id: 'r', object: 'response', status: 'incomplete', output: [reasoning, message], usage: { input_tokens: 1 } };
    const out = events(responseEvents(response)!);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    expect(out.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    expect(out[0]!['response']).toMatchObject({ id: 'r', status: 'in_progress', output: [], usage: null });
    expect(out.at(-1)!['response']).toEqual(response);
  });

  it('a response not finished is created and told its status, with no terminal event; JSON that is not a response is undefined', () => {
    const types = (status: string) => events(responseEvents({ id: 'r', object: 'response', status, output: [] })!).map((e) => [e.type, e.sequence_number]);
    expect(types('queued')).toEqual([
      ['response.created', 0],
      ['response.queued', 1],
    ]);
    expect(types('in_progress')).toEqual([
      ['response.created', 0],
      ['response.in_progress', 1],
    ]);
    expect(types('cancelled')).toEqual([['response.created', 0]]);
    expect(responseEvents({ object: 'list', data: [] })).toBeUndefined();
  });

  it('starting_after: only the events after the one it names, numbered as in the whole telling', () => {
    const response = { id: 'r', object: 'response', status: 'completed', output: [reasoning] };
    const all = events(responseEvents(response)!);
    expect(events(responseEvents(response, 2)!)).toEqual(all.slice(3));
    expect(events(responseEvents(response, 0)!).map((e) => e.sequence_number)).toEqual([1, 2, 3, 4]);
    expect(responseEvents(response, all.length - 1)).toBe('');
    expect(events(responseEvents({ ...response, status: 'in_progress' }, 0)!).map((e) => e.type)).toEqual(['response.in_progress']);
  });
});
