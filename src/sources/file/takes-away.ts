// Does a new version of a manifest file take something away from its last good version? Such a version is
// what a file caught mid-write looks like (emptied by `>`, cut after a few documents, cut inside a document
// or inside a value), so the file source serves it only once the file has stopped changing. A version that
// only adds or changes things applies at once. Pure, so it is tested on its own.
import { DEFAULT_NAMESPACE, objectRef, type SourcedObject } from '../../compile/resources.js';

/** kind/namespace/name of a manifest object. */
export function identity(o: SourcedObject): string {
  const m = o.object.metadata;
  return objectRef(String(o.object.kind), typeof m?.namespace === 'string' ? m.namespace : DEFAULT_NAMESPACE, String(m?.name));
}

/**
 * True when `next` has fewer objects than `last`, lacks one of them (by kind/namespace/name), or lacks part of
 * one: a field, a list item, or the end of a string (a value cut short is a strict prefix of the old one).
 */
export function takesAway(last: readonly SourcedObject[], next: readonly SourcedObject[]): boolean {
  if (next.length < last.length) return true;
  const byIdentity = new Map(next.map((o) => [identity(o), o.object]));
  return last.some((o) => {
    const now = byIdentity.get(identity(o));
    return now === undefined || losesPart(o.object, now);
  });
}

function losesPart(last: unknown, next: unknown): boolean {
  if (next === null || next === undefined) return last !== null && last !== undefined;
  if (typeof last === 'string') return typeof next === 'string' && next.length < last.length && last.startsWith(next);
  if (Array.isArray(last)) {
    if (!Array.isArray(next)) return false; // a different shape is a change, not a cut
    return next.length < last.length || last.some((item, i) => losesPart(item, next[i]));
  }
  if (typeof last === 'object' && last !== null) {
    if (typeof next !== 'object' || Array.isArray(next)) return false;
    const now = next as Record<string, unknown>;
    return Object.entries(last).some(([k, v]) => !(k in now) || losesPart(v, now[k]));
  }
  return false;
}
