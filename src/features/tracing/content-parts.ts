// The GenAI conventions' message parts (the schemas gen-ai-input-messages.json and gen-ai-output-messages.json) and
// the helpers that read a JSON document loosely, shared by the conversions of OpenAI's shapes
// (content-conversions.ts) and Anthropic's (anthropic-content.ts). Pure.

/** A message part: `type` names its kind; the other members are the schema's for that kind. */
export type Part = { readonly type: string } & Readonly<Record<string, unknown>>;

export interface Message {
  readonly role: string;
  readonly parts: readonly Part[];
  readonly name?: string;
  /** On output messages: stop, length, content_filter, tool_call, error (the schema's values), or the upstream's own. */
  readonly finish_reason?: string;
}

export type Doc = Record<string, unknown>;

export const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const docs = (v: unknown): Doc[] => (Array.isArray(v) ? v.filter(isDoc) : []);

export function text(content: string): Part {
  return { type: 'text', content };
}

/** Message content in either API's two forms: a string (one text part, none when empty) or a list of typed parts. */
export function partsOf(content: unknown, part: (p: Doc) => Part): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [text(content)];
  return docs(content).map(part);
}

export function reasoning(content: string): Part {
  return { type: 'reasoning', content };
}

/** A tool call; its arguments as the object they encode when they are JSON, else as the text sent. */
export function toolCall(id: string | undefined, name: string, args: unknown): Part {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = JSON.parse(args);
    } catch {
      value = args; // partial or not JSON: kept as text
    }
  }
  return { type: 'tool_call', ...(id !== undefined ? { id } : {}), name, arguments: value ?? null };
}

export function toolResponse(id: string | undefined, response: unknown): Part {
  return { type: 'tool_call_response', ...(id !== undefined ? { id } : {}), response: Array.isArray(response) ? joinedText(response) : (response ?? null) };
}

/** A URL part: a data: URL is the data itself (a blob), any other a reference (a uri). */
export function byUrl(url: string | undefined, modality: string): Part {
  const data = url === undefined ? undefined : /^data:([^;,]*)(?:;[^,]*)?,(.*)$/s.exec(url);
  if (data) return { type: 'blob', modality, ...(data[1] ? { mime_type: data[1] } : {}), content: data[2]! };
  return { type: 'uri', modality, uri: url ?? '' };
}

export function joinedText(parts: unknown[]): string {
  return docs(parts)
    .map((p) => str(p.text) ?? '')
    .join('');
}
