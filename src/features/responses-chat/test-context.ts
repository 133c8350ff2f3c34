// The ResponseContext the tests of this folder translate with, the Response it makes, and a reader of the Responses
// events a stream translation writes. Test support only (no test runner imported: this file is built with src/).
import type { ResponseContext } from './response-context.js';

export const HEX = '0123456789abcdef0123456789abcdef';

export const testContext: ResponseContext = {
  id: `resp_${HEX}`,
  createdAt: 1_700_000_000,
  model: 'public-model',
  customTools: new Set(['apply_patch', 'tools__patch']),
  namespaced: new Map([
    ['multi_agent_v1__spawn_agent', { namespace: 'multi_agent_v1', name: 'spawn_agent' }],
    ['tools__patch', { namespace: 'tools', name: 'patch' }],
  ]),
  echo: {},
};

/**
 * The Response the translation makes with testContext, written out as OpenAI's API answers it: every member, with
 * OpenAI's defaults for those the request left out.
 */
export function expectedResponse(status: string, output: unknown[], usage: unknown, incomplete: unknown = null): Record<string, unknown> {
  return {
    id: `resp_${HEX}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    error: null,
    incomplete_details: incomplete,
    instructions: null,
    max_output_tokens: null,
    model: 'public-model',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: {},
  };
}

/**
 * The data of each Responses event in `text`, after checking its framing: each `event: <type>\ndata: <json>\n\n`,
 * the `event:` naming the data's type, sequence numbers counting from 0. Throws on the first that is not.
 */
export function responsesEvents(text: string): Record<string, unknown>[] {
  const blocks = text.split('\n\n');
  if (blocks.pop() !== '') throw new Error(`the events do not end with a blank line: ${JSON.stringify(text.slice(-80))}`);
  return blocks.map((block, i) => {
    const m = /^event: (\S+)\ndata: (.*)$/.exec(block);
    if (!m) throw new Error(`not an event: ${JSON.stringify(block)}`);
    const data = JSON.parse(m[2]!) as Record<string, unknown>;
    if (data['type'] !== m[1]) throw new Error(`event: ${m[1]} carries type ${String(data['type'])}`);
    if (data['sequence_number'] !== i) throw new Error(`event ${i} has sequence_number ${String(data['sequence_number'])}`);
    return data;
  });
}
