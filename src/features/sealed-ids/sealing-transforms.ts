// Chooses how an upstream answer about a video or a stored response is rewritten on its way to the client:
// successful JSON gets its routable ids sealed, a Responses event stream gets them sealed event by event,
// error bodies quote the id the client sent instead of the upstream's, and everything else (video content,
// input_items pages whose cursors are item ids) is relayed untouched. Every rewrite streams: the gateway holds
// the bytes of one id at a time, never a body, so large answers cost no memory and are never passed on unsealed.
import type { Transform } from 'node:stream';
import { MIN_QUOTED_ID_CHARS, OWN_ID_FIELD, RESPONSE_EVENT_KEY, SEALED_FIELDS, sealIdLiteral, type SealContext } from './id-rewrite.js';
import type { SealedKind } from './sealed-id.js';
import { FieldPaths, jsonFieldStream, type ReplaceValue } from '../../dataplane/stream/json-field-scan.js';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import { readSequenceNumber } from '../../dataplane/upstream/sse-signals.js';
import { sseFieldStream } from '../../dataplane/stream/sse-field-scan.js';
import { replaceStream } from '../../dataplane/stream/stream-replace.js';

export type SealedBody = SealedKind | 'none';

export interface SealingChoice {
  /** What a successful body holds. */
  readonly body: SealedBody;
  /** ctx.known, when set, is also quoted in error texts in place of the upstream id. */
  readonly ctx: SealContext;
}

export function sealingTransform(choice: SealingChoice, statusCode: number, contentType: string, progress?: StreamProgress): Transform | undefined {
  const type = contentType.toLowerCase();
  const isJson = type.includes('json');
  if (statusCode >= 200 && statusCode < 300) {
    if (choice.body === 'none') return undefined;
    if (type.startsWith('text/event-stream')) {
      if (choice.body !== 'response') return undefined;
      const track =
        progress &&
        ((chunk: Buffer, from: number, to: number) => void (progress.lastSequenceNumber = readSequenceNumber(chunk, from, to) ?? progress.lastSequenceNumber));
      return sseFieldStream(EVENT_PATHS, seal(choice.ctx, 'response'), track);
    }
    return isJson ? jsonFieldStream(BODY_PATHS[choice.body], seal(choice.ctx, choice.body)) : undefined;
  }
  const echo = choice.ctx.known;
  if (echo && echo.upstreamId.length >= MIN_QUOTED_ID_CHARS && (isJson || type.startsWith('text/'))) {
    return replaceStream([{ find: Buffer.from(echo.upstreamId, 'utf8'), replace: Buffer.from(echo.sealedId, 'utf8') }]);
  }
  return undefined;
}

const BODY_PATHS: Readonly<Record<SealedKind, FieldPaths>> = {
  video: new FieldPaths(SEALED_FIELDS.video.map((name) => [name])),
  response: new FieldPaths(SEALED_FIELDS.response.map((name) => [name])),
};
const EVENT_PATHS = new FieldPaths(SEALED_FIELDS.response.map((name) => [RESPONSE_EVENT_KEY, name]));

function seal(ctx: SealContext, kind: SealedKind): ReplaceValue {
  return (field, literal) => sealIdLiteral(ctx, kind, literal, field === OWN_ID_FIELD);
}
