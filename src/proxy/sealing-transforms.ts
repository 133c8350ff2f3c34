// Chooses how an upstream answer about a video or a stored response is rewritten on its way to the client:
// successful JSON gets its routable ids sealed, a Responses event stream gets them sealed event by event,
// error bodies quote the id the client sent instead of the upstream's, and everything else (video content,
// input_items pages whose cursors are item ids) is relayed untouched.
import type { Transform } from 'node:stream';
import { replaceUpstreamId, sealResponseBody, sealVideoBody, type SealContext } from '../routing/id-rewrite.js';
import { bufferedRewriteStream, jsonRewrite } from './body-rewrite.js';
import { createResponsesIdRewriteStream } from './sse-id-rewrite.js';

export type SealedBody = 'video' | 'response' | 'none';

export interface SealingChoice {
  /** What a successful body holds. */
  readonly body: SealedBody;
  /** ctx.known, when set, is also quoted in error texts in place of the upstream id. */
  readonly ctx: SealContext;
}

export function sealingTransform(choice: SealingChoice, statusCode: number, contentType: string): Transform | undefined {
  const type = contentType.toLowerCase();
  const isJson = type.includes('json');
  if (statusCode >= 200 && statusCode < 300) {
    if (type.startsWith('text/event-stream')) return choice.body === 'response' ? createResponsesIdRewriteStream(choice.ctx) : undefined;
    if (!isJson || choice.body === 'none') return undefined;
    const seal = choice.body === 'video' ? sealVideoBody : sealResponseBody;
    return bufferedRewriteStream(jsonRewrite((v) => seal(v, choice.ctx)));
  }
  const echo = choice.ctx.known;
  if (echo && (isJson || type.startsWith('text/'))) {
    return bufferedRewriteStream((body) => {
      const text = body.toString('utf8');
      const out = replaceUpstreamId(text, echo.upstreamId, echo.sealedId);
      return out === text ? body : Buffer.from(out, 'utf8');
    });
  }
  return undefined;
}
