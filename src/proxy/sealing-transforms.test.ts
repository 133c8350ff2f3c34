import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import type { SealContext } from '../routing/id-rewrite.js';
import { IdSealer } from '../routing/sealed-id.js';
import { bufferedRewriteStream } from './body-rewrite.js';
import { sealingTransform } from './sealing-transforms.js';

const sealer = new IdSealer([randomBytes(32)]);
const ctx: SealContext = { sealer, model: 'm', backend: 'b', owner: 'ns/t' };
const run = async (t: NodeJS.ReadWriteStream, chunks: string[]) => text(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(t));

describe('sealingTransform', () => {
  it('seals a video JSON split over chunks', async () => {
    const t = sealingTransform({ body: 'video', ctx }, 200, 'application/json')!;
    const out = JSON.parse(await run(t, ['{"id":"vid', 'eo_1","remixed_from_video_id":"video_0","object":"video"}']));
    expect(sealer.unseal('video', out.id)?.upstreamId).toBe('video_1');
    expect(sealer.unseal('video', out.remixed_from_video_id)?.owner).toBe('ns/t');
  });

  it('seals response ids in SSE and JSON, leaves input_items and binary content alone', async () => {
    const sse = sealingTransform({ body: 'response', ctx }, 200, 'text/event-stream; charset=utf-8')!;
    const events = await run(sse, ['data: {"type":"response.created","response":{"id":"resp_1"}}\n', '\n']);
    expect(events).not.toContain('"resp_1"');
    expect(sealingTransform({ body: 'none', ctx }, 200, 'application/json')).toBeUndefined();
    expect(sealingTransform({ body: 'video', ctx }, 200, 'video/mp4')).toBeUndefined();
    expect(sealingTransform({ body: 'video', ctx }, 200, 'text/event-stream')).toBeUndefined();
  });

  it('quotes the client’s id in upstream errors, and leaves errors alone without one', async () => {
    const t = sealingTransform({ body: 'video', ctx: { ...ctx, known: { upstreamId: 'video_up', sealedId: 'video_SEALED' } } }, 404, 'application/json')!;
    expect(await run(t, ['{"error":{"message":"No video_', 'up here"}}'])).toBe('{"error":{"message":"No video_SEALED here"}}');
    expect(sealingTransform({ body: 'video', ctx }, 404, 'application/json')).toBeUndefined();
  });

  it('relays an oversized body untouched instead of holding it', async () => {
    const t = bufferedRewriteStream(() => Buffer.from('rewritten'), 10);
    expect(await run(t, ['0123456', '789abc', 'def'])).toBe('0123456789abcdef');
    expect(await run(bufferedRewriteStream(() => Buffer.from('rewritten'), 10), ['0123'])).toBe('rewritten');
  });
});
