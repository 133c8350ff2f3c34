// Finding a quoted JSON key (`"model"`, `"usage"`) from the end of a JSON or SSE text's bytes, as the features that
// read an answer's tail do (usage, tracing). In JavaScript, by Horspool's rule from the right: Buffer's lastIndexOf
// does the same search in C++, but calling it cost more than the whole search over the short tails searched here.
// Every byte of such a key is ASCII, which UTF-8 never uses inside a multi-byte character. Pure.

export class QuotedKey {
  /** The key with its quotes, as bytes. */
  readonly bytes: Buffer;
  /**
   * How far the search moves left when the byte under the start of its window is `c` and the window holds no match:
   * to the nearest place where `c` lines up with the same byte of the key, or past it: past a byte that is not in
   * the key, the search moves by the key's whole length.
   */
  readonly skip: Uint8Array;

  constructor(key: string) {
    this.bytes = Buffer.from(JSON.stringify(key));
    const n = this.bytes.length;
    this.skip = new Uint8Array(256).fill(n);
    for (let k = n - 1; k >= 1; k--) this.skip[this.bytes[k]!] = k;
  }
}

/** Where the last occurrence of the key that starts at or before `from` starts, or -1. */
export function lastKeyAt(bytes: Uint8Array, key: QuotedKey, from: number): number {
  const pattern = key.bytes;
  const skip = key.skip;
  const n = pattern.length;
  const quote = pattern[0];
  for (let i = Math.min(from, bytes.length - n); i >= 0; i -= skip[bytes[i]!]!) {
    // Most windows start on a byte that is not a quote: one comparison rejects them.
    if (bytes[i] !== quote) continue;
    let k = 1;
    while (k < n && bytes[i + k] === pattern[k]) k++;
    if (k === n) return i;
  }
  return -1;
}
