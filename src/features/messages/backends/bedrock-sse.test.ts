// Bedrock's event-stream answer as Anthropic's SSE: byte-exact events whatever the chunking, exceptions as Anthropic
// error events, and @anthropic-ai/sdk (the judge) assembling the decoded stream as it would Anthropic's own.
import { APIError } from '@anthropic-ai/sdk';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { describe, expect, it } from 'vitest';
import { messageEvents } from '../../../../test/fakes/anthropic-events.js';
import type { AnthropicTurn } from '../../../../test/fakes/anthropic-upstream.js';
import { chunkMessage, exceptionMessage } from '../../../../test/fakes/bedrock-claude.js';
import { judge } from '../../../../test/support/anthropic-sdk-judge.js';
import { EventStreamError } from './aws-event-stream.js';
import { BedrockSseDecoder, bedrockSseHandler } from './bedrock-sse.js';

const TURN: AnthropicTurn = {
  content: [
    { type: 'text', text: 'Listing ✓' },
    { type: 'tool_use', id: 'toolu_1', name: 'ls', input: { path: '.' } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 3, cache_creation_input_tokens: 0 },
};
const EVENTS = messageEvents('msg_1', 'claude', TURN);
const STREAM = Buffer.concat(EVENTS.map(chunkMessage));
const SSE = EVENTS.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

function decode(chunks: Uint8Array[]): string {
  const d = new BedrockSseDecoder();
  return Buffer.concat([...chunks.map((c) => d.push(c)), d.end()]).toString('utf8');
}

describe('Bedrock event stream to Anthropic SSE', () => {
  it('gives one SSE event per chunk, typed by its JSON, whatever byte the stream is split at', () => {
    expect(decode([STREAM])).toBe(SSE);
    for (let i = 0; i <= STREAM.length; i += 7) expect(decode([STREAM.subarray(0, i), STREAM.subarray(i)]), `split at ${i}`).toBe(SSE);
    expect(decode([...STREAM].map((b) => Uint8Array.of(b)))).toBe(SSE);
  });

  it('passes nothing on until a message is whole', () => {
    const d = new BedrockSseDecoder();
    const first = chunkMessage(EVENTS[0]!);
    expect(d.push(first.subarray(0, first.length - 1))).toHaveLength(0);
    expect(d.push(first.subarray(first.length - 1)).toString('utf8')).toBe(`event: message_start\ndata: ${JSON.stringify(EVENTS[0])}\n\n`);
  });

  it('keeps an event on one data line even when Bedrock’s JSON spans lines', () => {
    const d = new BedrockSseDecoder();
    const framed = chunkMessage({ type: 'ping' });
    // The same message with a pretty-printed event: the encoder is given the bytes member by hand.
    const pretty = Buffer.from(JSON.stringify({ type: 'ping', n: [1, 2] }, null, 2)).toString('base64');
    const message = new EventStreamCodec(toUtf8, fromUtf8).encode({
      headers: { ':event-type': { type: 'string', value: 'chunk' }, ':message-type': { type: 'string', value: 'event' } },
      body: Buffer.from(JSON.stringify({ bytes: pretty })),
    });
    expect(d.push(framed).toString('utf8')).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(d.push(message).toString('utf8')).toBe('event: ping\ndata: {"type":"ping","n":[1,2]}\n\n');
  });

  it('is read by the Anthropic SDK as the message it streams', async () => {
    const { client } = judge(decode([...STREAM].map((b) => Uint8Array.of(b))), { stream: true });
    const final = await client.messages.stream({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'ls' }] }).finalMessage();
    expect(final.content).toEqual(TURN.content);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 3 });
  });

  it.each([
    ['throttlingException', {}, 'rate_limit_error'],
    ['serviceUnavailableException', {}, 'overloaded_error'],
    ['validationException', {}, 'invalid_request_error'],
    ['internalServerException', {}, 'api_error'],
    ['modelTimeoutException', {}, 'api_error'],
    ['modelStreamErrorException', {}, 'api_error'],
    ['modelStreamErrorException', { originalStatusCode: 529, originalMessage: 'Overloaded' }, 'overloaded_error'],
    ['somethingNewException', {}, 'api_error'],
  ])('a %s %j is an Anthropic error event of type %s', (name, extra, type) => {
    const out = decode([chunkMessage(EVENTS[0]!), exceptionMessage(name, { message: 'it broke', ...extra })]);
    const [, error] = out.split(/\n\n/);
    expect(error!.split('\n')[0]).toBe('event: error');
    const data = JSON.parse(error!.split('\n')[1]!.slice('data: '.length));
    expect(data).toEqual({ type: 'error', error: { type, message: expect.stringContaining(`${name}: it broke`) } });
  });

  it('ends the SDK’s stream with the error it carries', async () => {
    const { client } = judge(decode([chunkMessage(EVENTS[0]!), exceptionMessage('throttlingException', { message: 'Too many tokens' })]), { stream: true });
    const stream = client.messages.stream({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(String((err as APIError).message)).toContain('rate_limit_error');
    expect(String((err as APIError).message)).toContain('Too many tokens');
  });

  it.each([
    ['validationException', {}, 'invalid_request_error'],
    ['modelTimeoutException', {}, 'api_error'],
    ['throttlingException', {}, 'rate_limit_error'],
    ['serviceUnavailableException', {}, 'overloaded_error'],
    ['internalServerException', {}, 'api_error'],
    ['modelStreamErrorException', { originalStatusCode: 529, originalMessage: 'Overloaded' }, 'overloaded_error'],
    ['someNewException', {}, 'api_error'],
  ])('tells a %s as the error type of its status', (type, detail, expected) => {
    const sse = decode([chunkMessage(EVENTS[0]!), exceptionMessage(type, { message: 'it failed', ...detail })]);
    const [, data] = /event: error\ndata: (.*)\n\n$/.exec(sse)!;
    expect(JSON.parse(data!)).toEqual({ type: 'error', error: { type: expected, message: `${type}: it failed` } });
  });

  it('throws a clear error on a corrupt message: the data plane fails the body with an error event', () => {
    const bad = Buffer.from(STREAM);
    bad[bad.length - 1]! ^= 0xff; // the last message's CRC
    const h = bedrockSseHandler();
    expect(h.edits).toBe(true);
    // The events before the corrupt message go out; the failure is told with the next chunk or at the end.
    expect(h.onData!(bad).toString('utf8')).toBe(SSE.slice(0, SSE.lastIndexOf('event: message_stop')));
    expect(() => h.onData!(Buffer.from('more'))).toThrow(EventStreamError);
    expect(() => h.flush!()).toThrow(/checksum/);
  });

  it('as an answer handler, passes the decoded events on and tells a cut-off stream at flush', () => {
    const h = bedrockSseHandler();
    const out = h.onData!(STREAM.subarray(0, STREAM.length - 3));
    expect(out.toString('utf8')).toBe(SSE.slice(0, SSE.lastIndexOf('event: message_stop')));
    expect(() => h.flush!()).toThrow(/ended inside a message/);
  });
});
