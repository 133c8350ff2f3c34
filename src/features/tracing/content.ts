// The opt-in content of a trace (--trace-content): what the client asked and what the model answered, as text
// for gen_ai.input.messages and gen_ai.output.messages. Pure and bounded: at most CONTENT_CHARS of each, and the
// backend's credentials masked (the answer is read before the relay masks it). Recorded in the OpenAI shapes the
// client and the upstream used (the messages or input member; the answer's messages or output, or for a
// stream the text of its deltas), not re-encoded into the conventions' parts structure.
export const CONTENT_CHARS = 16 * 1024;
/** Bytes of a JSON answer kept for parsing: enough for CONTENT_CHARS of content in its envelope. */
const ANSWER_BYTES = 4 * CONTENT_CHARS;

/** The `messages` (Chat Completions) or `input` (Responses) member of a JSON request body, as JSON text, masked. */
export function inputContent(body: Buffer, mask: readonly string[]): string | undefined {
  try {
    const doc = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const value = doc.messages ?? doc.input ?? doc.prompt;
    return value === undefined ? undefined : clip(masked(JSON.stringify(value), mask));
  } catch {
    return undefined;
  }
}

/** Collects an answer's content chunk by chunk: a JSON body (bounded), or the text deltas of an event stream. */
export class OutputCollector {
  readonly #stream: boolean;
  #json: Buffer[] = [];
  #jsonBytes = 0;
  #pending = '';
  #text = '';

  constructor(stream: boolean) {
    this.#stream = stream;
  }

  push(chunk: Buffer): void {
    if (!this.#stream) {
      if (this.#jsonBytes < ANSWER_BYTES) {
        this.#json.push(chunk);
        this.#jsonBytes += chunk.length;
      }
      return;
    }
    if (this.#text.length >= CONTENT_CHARS) return;
    const lines = (this.#pending + chunk.toString('utf8')).split('\n');
    this.#pending = lines.pop() ?? '';
    for (const line of lines) this.#event(line);
  }

  /** The content, masked; undefined when the answer had none the gateway can read. */
  text(mask: readonly string[]): string | undefined {
    let out: string | undefined;
    if (this.#stream) out = this.#text === '' ? undefined : this.#text;
    else {
      try {
        const doc = JSON.parse(Buffer.concat(this.#json).toString('utf8')) as Record<string, unknown>;
        const choices = doc.choices as { message?: unknown }[] | undefined;
        const value = Array.isArray(choices) ? choices.map((c) => c.message) : doc.output;
        out = value === undefined ? undefined : JSON.stringify(value);
      } catch {
        out = undefined; // cut at ANSWER_BYTES, or not JSON
      }
    }
    if (out === undefined) return undefined;
    return clip(masked(out, mask));
  }

  #event(line: string): void {
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data === '' || data === '[DONE]') return;
    try {
      const e = JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[]; type?: unknown; delta?: unknown };
      const delta = e.choices?.[0]?.delta?.content ?? (e.type === 'response.output_text.delta' ? e.delta : undefined);
      if (typeof delta === 'string') this.#text += delta;
    } catch {
      // Not an event the gateway can read (or a line split mid-JSON by a bad upstream): left out.
    }
  }
}

function clip(text: string): string {
  return text.length > CONTENT_CHARS ? `${text.slice(0, CONTENT_CHARS)}…[truncated]` : text;
}

/** The text with every mask replaced by as many `*`. */
function masked(text: string, masks: readonly string[]): string {
  let out = text;
  for (const m of masks) if (out.includes(m)) out = out.replaceAll(m, '*'.repeat(m.length));
  return out;
}
