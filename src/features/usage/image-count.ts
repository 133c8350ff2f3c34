// How many images an images answer holds, counted as its bytes pass: one `"b64_json"` or `"url"` key per entry of
// `data` in a JSON answer, one `…completed` event per image in a stream (partial images are previews, not billed).
// Counted rather than parsed: an answer of images is megabytes of base64 the gateway never holds whole. Base64 holds
// no quote, and a quote inside a string (a revised prompt) is escaped, so a key found unescaped is a key. Pure.

const JSON_KEYS = [Buffer.from('"b64_json"'), Buffer.from('"url"')];
const STREAM_KEYS = [Buffer.from('"image_generation.completed"'), Buffer.from('"image_edit.completed"')];
const BACKSLASH = 0x5c;

export class ImageCounter {
  readonly #keys: readonly Buffer[];
  /** The end of the previous chunk, as long as the longest key less one: a key split across two chunks is found. */
  #carry: Buffer = Buffer.alloc(0);
  count = 0;

  constructor(stream: boolean) {
    this.#keys = stream ? STREAM_KEYS : JSON_KEYS;
  }

  push(chunk: Buffer): void {
    const bytes = this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : chunk;
    for (const key of this.#keys) {
      // A key wholly inside the carried bytes was counted with the chunk before.
      for (let at = bytes.indexOf(key); at >= 0; at = bytes.indexOf(key, at + key.length)) {
        if (at + key.length > this.#carry.length && (at === 0 || bytes[at - 1] !== BACKSLASH)) this.count++;
      }
    }
    const keep = Math.min(bytes.length, Math.max(...this.#keys.map((k) => k.length)) - 1);
    this.#carry = Buffer.from(bytes.subarray(bytes.length - keep));
  }
}
