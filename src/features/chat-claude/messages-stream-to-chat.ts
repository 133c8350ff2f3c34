// A Messages event stream as a chat completions stream: a state machine fed each Anthropic event (its name and
// parsed data; the SSE framing, or Bedrock's event-stream frames, are read elsewhere) that returns the chat chunks
// as the exact text to send, `data: <json>\n\n` each, and `data: [DONE]\n\n` last. The event's type is its data's
// `type`, else its name (Bedrock's frames carry no name). Blocks are told as messages-to-completion.ts tells them
// whole, so that the openai SDK's finalChatCompletion equals the whole answer's translation: text deltas as
// `content`, thinking deltas as `reasoning_content`, each tool_use block as one tool call (numbered from 0);
// signatures, redacted thinking, server tool blocks and pings are dropped. The finish chunk goes out at
// message_delta, the usage chunk (include_usage) and [DONE] at message_stop.
// Rules: a stream that ends without message_stop, or before message_delta, or with an `error` event, ends with the
// gateway's chat error event (sseErrorEvent) and no [DONE], so the openai SDKs throw rather than take half an
// answer for a whole one. A taker of chunk objects (the Responses translation composed on this one) gets them
// rather than text. Pure.
import { sseErrorEvent } from '../../dataplane/upstream/sse-signals.js';
import type { Usage } from '../../model/usage.js';
import { toolUseId } from '../messages/answer-parts.js';
import { NativeStreamUsage } from '../messages/messages-usage.js';
import { isRecord } from '../../model/translation.js';
import type { CompletionContext } from './completion-context.js';
import { chatUsage, type FinishReason, finishReason, upstreamError } from './completion-parts.js';

/** What a content block index stands for: a tool call (its chat index, and whether it had input), or the rest. */
type Block = { kind: 'text' | 'thinking' | 'dropped' } | { kind: 'tool'; index: number; args: boolean };

export class MessagesStreamToChat {
  private started = false;
  private done = false;
  /** The answer ended in an error event (the upstream's, or the gateway's for a cut stream): its counts are partial. */
  private failed = false;
  private finish: FinishReason | undefined;
  private tools = 0;
  private readonly blocks = new Map<number, Block>();
  private readonly counts = new NativeStreamUsage();

  /** `chunks`: when given, each chunk is handed to it as its object (`[DONE]` as that string) rather than told as text. */
  constructor(
    private readonly ctx: CompletionContext,
    private readonly chunks?: (chunk: unknown) => void,
  ) {}

  /** What message_start and message_delta reported so far (for a client that leaves before the end). */
  get usageSoFar(): Usage | undefined {
    return this.counts.usage();
  }

  /** One Anthropic event: the chat chunks it makes (often none). */
  push(data: unknown, event?: string): string {
    if (this.done || !isRecord(data)) return '';
    const type = typeof data['type'] === 'string' ? data['type'] : event;
    switch (type) {
      case 'message_start':
        this.counts.observe(data);
        return this.start();
      case 'content_block_start':
        return this.start() + this.blockStart(data['index'], data['content_block']);
      case 'content_block_delta':
        return this.start() + this.blockDelta(data['index'], data['delta']);
      case 'content_block_stop':
        return this.blockStop(data['index']);
      case 'message_delta':
        return this.start() + this.messageDelta(data);
      case 'message_stop':
        return this.stop();
      case 'error':
        return this.fail(upstreamError(data) ?? { message: 'The upstream failed mid-stream.', type: 'server_error', code: 'upstream_error' });
      default:
        return ''; // ping, and events this translation does not know
    }
  }

  /**
   * The upstream ended: what is still owed (the cut-stream error when the answer never finished) and its usage, none
   * for an answer that failed (message_start's output count is a placeholder): usageSoFar hands its counts to the estimate.
   */
  end(): { events: string; usage: Usage | undefined } {
    const events = this.done ? '' : this.fail({ message: UNFINISHED, type: 'server_error', code: 'upstream_error' });
    return { events, usage: this.failed ? undefined : this.counts.usage() };
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  private blockStart(index: unknown, block: unknown): string {
    if (typeof index !== 'number' || !isRecord(block)) return '';
    switch (block['type']) {
      case 'text':
        this.blocks.set(index, { kind: 'text' });
        return this.text('content', block['text']);
      case 'thinking':
        this.blocks.set(index, { kind: 'thinking' });
        return this.text('reasoning_content', block['thinking']);
      case 'tool_use': {
        const call = { kind: 'tool' as const, index: this.tools++, args: false };
        this.blocks.set(index, call);
        const name = typeof block['name'] === 'string' ? block['name'] : '';
        const head = { index: call.index, id: toolUseId(block['id']), type: 'function', function: { name, arguments: '' } };
        return this.chunk({ tool_calls: [head] });
      }
      default:
        this.blocks.set(index, { kind: 'dropped' });
        return '';
    }
  }

  private blockDelta(index: unknown, delta: unknown): string {
    const block = typeof index === 'number' ? this.blocks.get(index) : undefined;
    if (!block || !isRecord(delta)) return '';
    if (delta['type'] === 'text_delta' && block.kind === 'text') return this.text('content', delta['text']);
    if (delta['type'] === 'thinking_delta' && block.kind === 'thinking') return this.text('reasoning_content', delta['thinking']);
    if (delta['type'] === 'input_json_delta' && block.kind === 'tool') {
      const piece = delta['partial_json'];
      if (typeof piece !== 'string' || piece === '') return '';
      block.args = true;
      return this.chunk({ tool_calls: [{ index: block.index, function: { arguments: piece } }] });
    }
    return ''; // signature_delta, citations_delta, and the deltas of dropped blocks
  }

  /** A tool without parameters streams no input: its arguments are `{}`, as the whole answer's JSON of its input. */
  private blockStop(index: unknown): string {
    const block = typeof index === 'number' ? this.blocks.get(index) : undefined;
    if (block?.kind !== 'tool' || block.args) return '';
    block.args = true;
    return this.chunk({ tool_calls: [{ index: block.index, function: { arguments: '{}' } }] });
  }

  private messageDelta(data: Record<string, unknown>): string {
    this.counts.observe(data);
    if (this.finish !== undefined) return '';
    const delta = isRecord(data['delta']) ? data['delta'] : {};
    this.finish = finishReason(delta['stop_reason']);
    return this.line({ ...this.head(), choices: [{ index: 0, delta: {}, finish_reason: this.finish, logprobs: null }] });
  }

  /** message_stop: the usage chunk when asked for, and [DONE]; without a message_delta before it, the answer is cut. */
  private stop(): string {
    if (this.finish === undefined) return this.fail({ message: NO_FINISH, type: 'server_error', code: 'upstream_error' });
    this.done = true;
    const usage = this.counts.usage();
    const last = this.ctx.includeUsage && usage ? this.line({ ...this.head(), choices: [], usage: chatUsage(usage) }) : '';
    return last + this.hand('[DONE]', 'data: [DONE]\n\n');
  }

  private text(member: 'content' | 'reasoning_content', text: unknown): string {
    return typeof text === 'string' && text !== '' ? this.chunk({ [member]: text }) : '';
  }

  private chunk(delta: Record<string, unknown>): string {
    return this.line({ ...this.head(), choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] });
  }

  private head(): { id: string; object: 'chat.completion.chunk'; created: number; model: string } {
    return { id: this.ctx.id, object: 'chat.completion.chunk', created: this.ctx.created, model: this.ctx.model };
  }

  private line(chunk: Record<string, unknown>): string {
    return this.chunks ? this.hand(chunk, '') : `data: ${JSON.stringify(chunk)}\n\n`;
  }

  private fail(e: { message: string; type: string; code: string | null }): string {
    this.done = this.failed = true;
    return this.hand({ error: { message: e.message, type: e.type, param: null, code: e.code } }, sseErrorEvent(e));
  }

  /** `chunk` handed over when there is a taker (nothing is told then), else `text`. */
  private hand(chunk: unknown, text: string): string {
    if (!this.chunks) return text;
    this.chunks(chunk);
    return '';
  }
}

const UNFINISHED = 'The upstream stream ended before the answer was finished.';
const NO_FINISH = 'The upstream stream stopped without saying why the answer ended.';
