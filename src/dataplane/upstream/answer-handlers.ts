// The handlers the exchange's transforms give one answer (onResponseStart), in the transforms' order, and their
// rewrite streams apart: the relay runs the handlers, the stream chain the rewrites.
import type { Transform } from 'node:stream';
import type { Answer, AnswerHandler, ExchangeTransform } from '../exchange/transform.js';

export interface AnswerHandlers {
  /** Streams the body passes through (decoded first), in order. */
  readonly rewrites: readonly Transform[];
  /** Every handler, in order (those with only a rewrite too: harmless, and usually there are none). */
  readonly handlers: readonly AnswerHandler[];
  /** Some handler may change the bytes: the upstream's Content-Length cannot be passed on then. */
  readonly edits: boolean;
}

const NONE: readonly never[] = [];

export function answerHandlers(transforms: readonly ExchangeTransform[], answer: Answer): AnswerHandlers {
  let handlers: AnswerHandler[] | undefined;
  let rewrites: Transform[] | undefined;
  let edits = false;
  for (const t of transforms) {
    const h = t.onResponseStart?.(answer);
    if (!h) continue;
    (handlers ??= []).push(h);
    if (h.rewrite) (rewrites ??= []).push(h.rewrite);
    if (h.edits) edits = true;
  }
  return { rewrites: rewrites ?? NONE, handlers: handlers ?? NONE, edits };
}
