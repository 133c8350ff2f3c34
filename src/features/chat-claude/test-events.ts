// Anthropic event streams for the tests of this folder, as the Messages API sends them for a whole answer: each
// text, thinking and tool input in two deltas. Test support only.

type Data = Record<string, unknown>;
export type Event = [name: string, data: Data];

function halves(s: string): string[] {
  const at = Math.ceil(s.length / 2);
  return [s.slice(0, at), s.slice(at)].filter((h) => h !== '');
}

/** The events of a stream that answers `message` (a whole Messages answer), message_start to message_stop. */
export function eventsOf(message: Data): Event[] {
  const { content, stop_reason, stop_sequence, usage } = message as { content: Data[]; stop_reason: unknown; stop_sequence: unknown; usage: Data };
  const startUsage = { ...usage, output_tokens: 1 };
  const events: Event[] = [['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: startUsage } }]];
  events.push(['ping', { type: 'ping' }]);
  content.forEach((block, index) => {
    const delta = (d: Data): Event => ['content_block_delta', { type: 'content_block_delta', index, delta: d }];
    if (block['type'] === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      for (const h of halves(block['text'] as string)) events.push(delta({ type: 'text_delta', text: h }));
    } else if (block['type'] === 'thinking') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }]);
      for (const h of halves(block['thinking'] as string)) events.push(delta({ type: 'thinking_delta', thinking: h }));
      events.push(delta({ type: 'signature_delta', signature: 'EqQBCgIYAhIM' }));
    } else if (block['type'] === 'tool_use') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
      const input = JSON.stringify(block['input']);
      // A tool without parameters streams no input at all.
      if (input !== '{}') for (const h of halves(input)) events.push(delta({ type: 'input_json_delta', partial_json: h }));
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: block }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason, stop_sequence }, usage: { output_tokens: usage['output_tokens'] } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}

/** A whole Messages answer. */
export function answerOf(content: Data[], stop_reason: string, usage: Data = { input_tokens: 12, output_tokens: 7 }): Data {
  const full = { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage };
  return { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason, stop_sequence: null, usage: full };
}
