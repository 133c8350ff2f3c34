// Messages are built by the AWS SDK's own encoder (through the fake Bedrock's helpers), so the reader is checked
// against the format as AWS writes it, split at every byte.
import { describe, expect, it } from 'vitest';
import { chunkMessage, exceptionMessage } from '../../../../test/fakes/bedrock-claude.js';
import { EventStreamError, type EventStreamMessage, EventStreamReader } from './aws-event-stream.js';

const MESSAGES = [chunkMessage({ type: 'ping' }), exceptionMessage('throttlingException', { message: 'slow down' }), chunkMessage({ type: 'message_stop' })];
const STREAM = Buffer.concat(MESSAGES);

const summary = (m: EventStreamMessage) => `${m.headers[':message-type']?.value}:${Buffer.from(m.body).toString('utf8')}`;
const EXPECTED = MESSAGES.map((bytes) => summary(new EventStreamReader().push(bytes)[0]!));

function readAll(chunks: Uint8Array[]): string[] {
  const reader = new EventStreamReader();
  const out = chunks.flatMap((c) => reader.push(c)).map(summary);
  reader.end();
  return out;
}

describe('AWS event-stream reader', () => {
  it('reads whole messages, several in one chunk', () => {
    expect(EXPECTED).toHaveLength(3);
    expect(EXPECTED[1]).toBe('exception:{"message":"slow down"}');
    expect(readAll([STREAM])).toEqual(EXPECTED);
  });

  it('reads the same messages whatever byte the stream is split at, and one byte at a time', () => {
    for (let i = 0; i <= STREAM.length; i++) expect(readAll([STREAM.subarray(0, i), STREAM.subarray(i)]), `split at ${i}`).toEqual(EXPECTED);
    expect(readAll([...STREAM].map((b) => Uint8Array.of(b)))).toEqual(EXPECTED);
  });

  it('leaves the caller’s chunks as they were (a message is decoded from views or one copy)', () => {
    const copy = Buffer.from(STREAM);
    readAll([copy.subarray(0, 5), copy.subarray(5, 200), copy.subarray(200)]);
    expect(copy.equals(STREAM)).toBe(true);
  });

  it('fails with a clear error on a bad message checksum, and keeps failing', () => {
    const bad = Buffer.from(STREAM);
    bad[MESSAGES[0]!.length + 20]! ^= 0xff; // a byte inside the second message's headers
    const reader = new EventStreamReader();
    expect(reader.push(bad.subarray(0, MESSAGES[0]!.length))).toHaveLength(1);
    expect(() => reader.push(bad.subarray(MESSAGES[0]!.length))).toThrow(EventStreamError);
    expect(() => reader.push(bad.subarray(MESSAGES[0]!.length))).toThrow(/malformed AWS event stream: .*checksum/);
    expect(() => reader.push(Buffer.from(MESSAGES[2]!))).toThrow(EventStreamError);
    expect(() => reader.end()).toThrow(EventStreamError);
  });

  it('passes on the good messages of a chunk before a bad one, then fails', () => {
    const bad = Buffer.from(STREAM);
    bad[MESSAGES[0]!.length + 20]! ^= 0xff;
    const reader = new EventStreamReader();
    expect(reader.push(bad).map(summary)).toEqual([EXPECTED[0]]);
    expect(() => reader.end()).toThrow(/checksum/);
  });

  it('fails on a bad prelude checksum and on an impossible length, before waiting for the bytes claimed', () => {
    const prelude = Buffer.from(MESSAGES[0]!);
    prelude[9]! ^= 0x01; // the prelude's CRC
    expect(() => new EventStreamReader().push(prelude)).toThrow(/prelude checksum/);
    const huge = Buffer.alloc(12);
    huge.writeUInt32BE(0x7fffffff, 0);
    expect(() => new EventStreamReader().push(huge)).toThrow(/claims 2147483647 bytes/);
    expect(() => new EventStreamReader().push(Buffer.from([0, 0, 0, 3]))).toThrow(/claims 3 bytes/);
  });

  it('fails at the end when the stream stopped inside a message', () => {
    const reader = new EventStreamReader();
    reader.push(STREAM.subarray(0, STREAM.length - 1));
    expect(() => reader.end()).toThrow(/ended inside a message \(\d+ bytes held\)/);
  });
});
