// The answer stages the exchange's transforms put on one answer, sorted by what the relay does with them.
import type { Answer, AnswerStage, ChunkEditor, ExchangeTransform } from '../exchange/transform.js';
import type { Transform } from 'node:stream';

export interface AnswerStages {
  /** Streams the body passes through (decoded first), in order. */
  readonly rewrites: readonly Transform[];
  readonly editors: readonly ChunkEditor[];
  readonly observers: readonly AnswerStage[];
}

const NONE: readonly never[] = [];
const REWRITE = (s: AnswerStage) => s.rewrite;
const EDIT = (s: AnswerStage) => s.edit;
const OBSERVER = (s: AnswerStage) => (s.observe !== undefined || s.end !== undefined ? s : undefined);

/** What pick finds in the stages, in order; one shared empty array when none (the usual case for rewrites). */
function collect<T>(stages: readonly AnswerStage[], pick: (s: AnswerStage) => T | undefined): readonly T[] {
  let out: T[] | undefined;
  for (const s of stages) {
    const v = pick(s);
    if (v !== undefined) (out ??= []).push(v);
  }
  return out ?? NONE;
}

/** The stage each transform puts on this answer, in the transforms' order. */
export function answerStages(transforms: readonly ExchangeTransform[], answer: Answer): AnswerStages {
  const stages: AnswerStage[] = [];
  for (const t of transforms) {
    const stage = t.answer?.(answer);
    if (stage) stages.push(stage);
  }
  return { rewrites: collect(stages, REWRITE), editors: collect(stages, EDIT), observers: collect(stages, OBSERVER) };
}
