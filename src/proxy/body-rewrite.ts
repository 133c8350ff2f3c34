// Whole-body rewrites for small upstream answers (a Video or Response JSON, an error body): the body is
// collected up to a limit, rewritten once, and sent on. Larger bodies are relayed untouched as they flow, so
// a surprising upstream answer can never make the gateway hold more than `maxBytes`. Streams (SSE) and
// binary content never come here: they have their own event-by-event rewrite or none at all.
import { Transform, type TransformCallback } from 'node:stream';

export const DEFAULT_MAX_REWRITE_BYTES = 32 * 1024 * 1024;

export function bufferedRewriteStream(rewrite: (body: Buffer) => Buffer, maxBytes = DEFAULT_MAX_REWRITE_BYTES): Transform {
  let held: Buffer[] = [];
  let size = 0;
  let gaveUp = false;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      if (gaveUp) return done(null, chunk);
      held.push(chunk);
      size += chunk.length;
      if (size > maxBytes) {
        gaveUp = true;
        const all = Buffer.concat(held);
        held = [];
        return done(null, all);
      }
      done();
    },
    flush(done: TransformCallback) {
      if (gaveUp) return done();
      try {
        done(null, rewrite(Buffer.concat(held)));
      } catch (err) {
        done(err as Error);
      }
    },
  });
}

/** Rewrites a JSON body in place via `mutate`; anything unparseable, or unchanged, goes out byte for byte. */
export function jsonRewrite(mutate: (value: unknown) => boolean): (body: Buffer) => Buffer {
  return (body) => {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return body;
    }
    return mutate(value) ? Buffer.from(JSON.stringify(value), 'utf8') : body;
  };
}
