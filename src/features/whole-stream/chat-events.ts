// A whole chat completion as the `chat.completion.chunk` events of a stream, for an upstream that answered a stream
// request whole: per choice one chunk with the whole message as its delta (tool calls indexed, as stream deltas are)
// and one with its finish_reason; the usage chunk only when the client asked for it; then `[DONE]`. Pure.

type Json = Record<string, unknown>;

/** What a stream's client was promised: the usage chunk (`stream_options.include_usage`). */
export interface ChatStreamAsk {
  readonly includeUsage: boolean;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function data(chunk: Json): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The delta that carries a whole message: its members as they are, each tool call with the index a stream gives it. */
function delta(message: Json): Json {
  const calls = message['tool_calls'];
  if (!Array.isArray(calls)) return message;
  return { ...message, tool_calls: calls.map((call: unknown, index) => (isObject(call) ? { index, ...call } : call)) };
}

/** The events of `completion`, or undefined when it is not a chat completion (no choices with a message). */
export function chatEvents(completion: unknown, ask: ChatStreamAsk): string | undefined {
  if (!isObject(completion) || !Array.isArray(completion['choices'])) return undefined;
  const { choices, usage, object: _object, ...head } = completion;
  if (!choices.every((c: unknown) => isObject(c) && isObject(c['message']))) return undefined;
  // Every chunk of a stream that reports usage carries `usage: null` until the last (OpenAI's stream does).
  const base: Json = { ...head, object: 'chat.completion.chunk', ...(ask.includeUsage ? { usage: null } : {}) };
  let out = '';
  (choices as Json[]).forEach((choice, i) => {
    const { message, finish_reason, logprobs, index, ...rest } = choice;
    const at = typeof index === 'number' ? index : i;
    out += data({ ...base, choices: [{ ...rest, index: at, delta: delta(message as Json), logprobs: logprobs ?? null, finish_reason: null }] });
    out += data({ ...base, choices: [{ index: at, delta: {}, logprobs: null, finish_reason: finish_reason ?? 'stop' }] });
  });
  if (ask.includeUsage && isObject(usage)) out += data({ ...base, choices: [], usage });
  return `${out}data: [DONE]\n\n`;
}
