// How many images an images answer holds, counted as its bytes pass: one `"b64_json"` or `"url"` key per entry of
// `data` in a JSON answer whose value is a string (an OpenAI-compatible server may write the other one as null:
// `{"b64_json": "…", "url": null}` is one image), one `…completed` event per image in a stream (partial images are
// previews, not billed). Counted rather than parsed: an answer of images is megabytes of base64 the gateway never
// holds whole. Base64 holds no quote, and a quote inside a string (a revised prompt) is escaped, so a key found
// unescaped is a key. Pure.

const JSON_KEYS = [Buffer.from('"b64_json"'), Buffer.from('"url"')];
const STREAM_KEYS = [Buffer.from('"image_generation.completed"'), Buffer.from('"image_edit.completed"')];
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const QUOTE = 0x22;
/** Whitespace a key's value may stand behind and still be read; encoders write at most a few bytes of it. */
const MAX_GAP = 64;

export class ImageCounter {
  readonly #keys: readonly Buffer[];
  readonly #longest: number;
  /** JSON: a key counts only once its value is seen to be a string. */
  readonly #valued: boolean;
  /** The bytes not yet decided (a key cut at the end of a chunk, or whose value has not arrived), after one byte before them. */
  #carry: Buffer = Buffer.alloc(0);
  /** 1 when #carry starts with the byte before the undecided ones (to see a backslash escaping a key), else 0. */
  #lead = 0;
  count = 0;

  constructor(stream: boolean) {
    this.#keys = stream ? STREAM_KEYS : JSON_KEYS;
    this.#longest = Math.max(...this.#keys.map((k) => k.length));
    this.#valued = !stream;
  }

  push(chunk: Buffer): void {
    const bytes = this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : chunk;
    // Keys that start at `next` or later are decided with the next chunk.
    let next = Math.max(this.#lead, bytes.length - (this.#longest - 1));
    const images: number[] = [];
    for (const key of this.#keys) {
      for (let at = bytes.indexOf(key, this.#lead); at >= 0; at = bytes.indexOf(key, at + key.length)) {
        if (at > 0 && bytes[at - 1] === BACKSLASH) continue;
        if (!this.#valued) {
          images.push(at);
          continue;
        }
        const value = valueAfter(bytes, at + key.length);
        if (value === undefined) next = Math.min(next, at);
        else if (value === QUOTE) images.push(at);
      }
    }
    for (const at of images) if (at < next) this.count++;
    const from = Math.max(0, next - 1);
    this.#lead = next - from;
    this.#carry = Buffer.from(bytes.subarray(from));
  }
}

/**
 * The first byte of the value after a key ending at `from`; -1 when no colon follows (not a key) or the value stands
 * too far behind spaces; undefined when the bytes end before it.
 */
function valueAfter(bytes: Buffer, from: number): number | undefined {
  let i = from;
  let colon = false;
  for (; i < bytes.length && i - from <= MAX_GAP; i++) {
    const c = bytes[i]!;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (c === COLON && !colon) {
      colon = true;
      continue;
    }
    return colon ? c : -1;
  }
  return i < bytes.length || i - from > MAX_GAP ? -1 : undefined;
}
