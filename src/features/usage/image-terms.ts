// The size and quality an images answer says it made. gpt-image-1 writes them after the images, at the top of a JSON
// answer and in each stream event, so the answer's tail holds them (the completed event's last): a request that left
// them to "auto" (the default) is priced per image at what was made, not at the request's silence. Read from the
// bytes like the usage object (usage-object.ts); a key inside a string is escaped (\"size\") and never matches. Pure.
import { lastKeyAt, QuotedKey } from '../../dataplane/stream/json-key-search.js';
import { skipJsonSpace } from '../../dataplane/request/json-scan.js';

export interface ImageTerms {
  readonly size?: string;
  readonly quality?: string;
}

const SIZE = new QuotedKey('size');
const QUALITY = new QuotedKey('quality');
const COLON = 0x3a;
const QUOTE = 0x22;
/** What a size or a quality looks like ("1024x1024", "high", "hd"): anything else is not taken for one. */
const TERM = /^[A-Za-z0-9_.-]{1,32}$/;

/** The last `size` and `quality` string members in the tail of an images answer (JSON or SSE), each undefined when absent. */
export function statedImageTerms(tail: Buffer): ImageTerms {
  const size = lastTerm(tail, SIZE);
  const quality = lastTerm(tail, QUALITY);
  return { ...(size !== undefined ? { size } : {}), ...(quality !== undefined ? { quality } : {}) };
}

function lastTerm(bytes: Buffer, key: QuotedKey): string | undefined {
  for (let at = lastKeyAt(bytes, key, bytes.length); at >= 0; at = lastKeyAt(bytes, key, at - 1)) {
    let i = skipJsonSpace(bytes, at + key.bytes.length);
    if (bytes[i] !== COLON) continue;
    i = skipJsonSpace(bytes, i + 1);
    if (bytes[i] !== QUOTE) continue;
    const end = bytes.indexOf(QUOTE, i + 1);
    const value = end < 0 ? '' : bytes.toString('latin1', i + 1, end);
    if (TERM.test(value)) return value;
  }
  return undefined;
}
