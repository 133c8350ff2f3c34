import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { sealId, type SealContext } from './id-rewrite.js';
import { IdSealer } from './sealed-id.js';
import { sealingTransform } from './sealing-transforms.js';

const sealer = new IdSealer([randomBytes(32)]);
const ctx: SealContext = { sealer, model: 'm', backend: 'b', owner: 'ns/t' };
const s = (kind: 'video' | 'response', id: string) => sealId(ctx, kind, id);
const run = async (t: NodeJS.ReadWriteStream, chunks: string[]) => text(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(t));

describe('sealingTransform', () => {
  it('seals a video’s id and remixed_from_video_id, split over chunks, and nothing else', async () => {
    const t = sealingTransform({ body: 'video', ctx }, 200, 'application/json')!;
    const out = JSON.parse(await run(t, ['{"id":"vid', 'eo_2","object":"video","remixed_from_video_id":"video_1","prompt":"video_2","error":null}']));
    expect(out).toEqual({ id: s('video', 'video_2'), object: 'video', remixed_from_video_id: s('video', 'video_1'), prompt: 'video_2', error: null });
    const plain = await run(sealingTransform({ body: 'video', ctx }, 200, 'application/json')!, ['{"id":"video_3","remixed_from_video_id":null}']);
    expect(JSON.parse(plain)).toEqual({ id: s('video', 'video_3'), remixed_from_video_id: null });
  });

  it('seals a response’s id and previous_response_id, not item or conversation ids', async () => {
    const body = { id: 'resp_2', object: 'response', previous_response_id: 'resp_1', output: [{ id: 'msg_1' }], conversation: { id: 'conv_1' } };
    const out = JSON.parse(await run(sealingTransform({ body: 'response', ctx }, 200, 'application/json; charset=utf-8')!, [JSON.stringify(body)]));
    expect(out).toEqual({ ...body, id: s('response', 'resp_2'), previous_response_id: s('response', 'resp_1') });
  });

  it('gives back the id the client presented for the same upstream id (stable across key rotation), never across kinds', async () => {
    const known = { upstreamId: 'resp_1', sealedId: 'resp_PRESENTED' };
    const r = JSON.parse(
      await run(sealingTransform({ body: 'response', ctx: { ...ctx, known } }, 200, 'application/json')!, ['{"id":"resp_1","previous_response_id":"resp_0"}']),
    );
    expect(r).toEqual({ id: 'resp_PRESENTED', previous_response_id: s('response', 'resp_0') });
    const v = JSON.parse(await run(sealingTransform({ body: 'video', ctx: { ...ctx, known } }, 200, 'application/json')!, ['{"id":"resp_1"}']));
    expect(v.id).toBe(s('video', 'resp_1'));
  });

  it('leaves input_items, binary content and video streams alone', () => {
    expect(sealingTransform({ body: 'none', ctx }, 200, 'application/json')).toBeUndefined();
    expect(sealingTransform({ body: 'video', ctx }, 200, 'video/mp4')).toBeUndefined();
    expect(sealingTransform({ body: 'video', ctx }, 200, 'text/event-stream')).toBeUndefined();
  });

  it('quotes the client’s id in upstream errors, even split over chunks, and leaves errors alone without one', async () => {
    const t = sealingTransform({ body: 'video', ctx: { ...ctx, known: { upstreamId: 'video_up', sealedId: 'video_SEALED' } } }, 404, 'application/json')!;
    expect(await run(t, ['{"error":{"message":"No video_', 'up here (video_up)"}}'])).toBe('{"error":{"message":"No video_SEALED here (video_SEALED)"}}');
    expect(sealingTransform({ body: 'video', ctx }, 404, 'application/json')).toBeUndefined();
  });
});
