// Calls of tools the upstream runs itself and bills per call (web search, web fetch, file search), where they are
// not in the usage object: a Responses answer lists them as output items (web_search_call, file_search_call).
// Anthropic's are in usage.server_tool_use, read with the rest of a Messages usage (messages-usage.ts). Counted only
// for a request whose tools could call one: other answers get no work per chunk.
import type { RequestPlan } from '../../dataplane/exchange/transform.js';
import type { ServerToolCalls } from '../../model/usage.js';

const UNCOUNTED: ServerToolCalls = Object.freeze({ uncounted: true });
/** Tool types that run upstream: OpenAI's web_search (and _preview) and file_search, Anthropic's web_search_* and web_fetch_*. */
const SERVER_TOOL = /"type"\s*:\s*"(?:web_search|web_fetch|file_search)/;

/**
 * Whether the request lets the upstream run a tool it bills per call: its `tools` name one, or (Responses) it uses a
 * stored `prompt`, whose tools the gateway cannot see.
 */
export function mayCallServerTools(plan: RequestPlan | undefined): boolean {
  if (!plan) return false;
  const tools = plan.raw('tools');
  return (tools !== undefined && SERVER_TOOL.test(tools)) || plan.raw('prompt') !== undefined;
}

/** What an answer whose usage could not be read says of its server-side tool calls: not counted, so unknown. */
export function uncountedCalls(): ServerToolCalls {
  return UNCOUNTED;
}

/**
 * Counts the web and file searches of a Responses answer as its bytes pass. A whole answer names each call once, as
 * an output item's type, "web_search_call"; a stream names it in several events (the item added and done, the final
 * response), but ends each call with one response.web_search_call.completed event. Between unescaped quotes these are
 * JSON strings of their own, never words inside another string, whose quotes are escaped.
 */
export class ResponsesToolCounter {
  readonly #web: Buffer;
  readonly #file: Buffer;
  /** Bytes kept from before a chunk: one less than the longer name, so a name cut between chunks is seen whole. */
  readonly #keep: number;
  /** The kept bytes, then the new chunk's first ones: one buffer for the answer, no allocation per chunk. */
  readonly #joint: Buffer;
  #carried = 0;
  #webSearch = 0;
  #fileSearch = 0;

  constructor(isStream: boolean) {
    this.#web = Buffer.from(isStream ? '"response.web_search_call.completed"' : '"web_search_call"');
    this.#file = Buffer.from(isStream ? '"response.file_search_call.completed"' : '"file_search_call"');
    this.#keep = Math.max(this.#web.length, this.#file.length) - 1;
    this.#joint = Buffer.alloc(2 * this.#keep);
  }

  push(chunk: Buffer): void {
    const keep = this.#keep;
    const joint = this.#joint;
    const carried = this.#carried;
    if (carried > 0) {
      // Only the names that start in the kept bytes and end in this chunk: the others were counted, or are below.
      const head = chunk.copy(joint, carried, 0, Math.min(chunk.length, keep));
      const seam = joint.subarray(0, carried + head);
      this.#webSearch += occurrences(seam, this.#web, carried);
      this.#fileSearch += occurrences(seam, this.#file, carried);
    }
    this.#webSearch += occurrences(chunk, this.#web);
    this.#fileSearch += occurrences(chunk, this.#file);
    // The last `keep` bytes of what was kept and this chunk, at the start of the joint buffer.
    if (chunk.length >= keep) this.#carried = chunk.copy(joint, 0, chunk.length - keep);
    else {
      const fromKept = Math.min(carried, keep - chunk.length);
      joint.copyWithin(0, carried - fromKept, carried);
      this.#carried = fromKept + chunk.copy(joint, fromKept);
    }
  }

  /** The calls counted; undefined when there were none. */
  calls(): ServerToolCalls | undefined {
    const webSearch = this.#webSearch;
    const fileSearch = this.#fileSearch;
    if (webSearch === 0 && fileSearch === 0) return undefined;
    return { ...(webSearch > 0 ? { webSearch } : {}), ...(fileSearch > 0 ? { fileSearch } : {}) };
  }
}

/** Matches of `needle` in `bytes`; with `crossing`, only those that start before it and end after it. */
function occurrences(bytes: Buffer, needle: Buffer, crossing?: number): number {
  let n = 0;
  for (let i = bytes.indexOf(needle); i >= 0; i = bytes.indexOf(needle, i + 1)) {
    if (crossing === undefined || (i < crossing && i + needle.length > crossing)) n++;
    else if (i >= crossing) break;
  }
  return n;
}
