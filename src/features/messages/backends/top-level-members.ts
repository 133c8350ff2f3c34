// Removes and appends top-level members of a JSON request body by splicing byte ranges, so every other byte
// (thinking signatures, cache_control, images, numbers too large for a double) reaches the cloud as the client
// wrote it. Uses the data plane's validating scanner; nothing is parsed into a tree. Pure.
import { scanJsonObject, skipJsonSpace, type TopLevelMember, WantedKeys } from '../../../dataplane/request/json-scan.js';

const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;

export class TopLevelMembers {
  readonly #raw: Buffer;
  readonly #members: readonly TopLevelMember[];
  readonly #memberCount: number;
  readonly #closeAt: number;

  private constructor(raw: Buffer, members: readonly TopLevelMember[], memberCount: number, closeAt: number) {
    this.#raw = raw;
    this.#members = members;
    this.#memberCount = memberCount;
    this.#closeAt = closeAt;
  }

  /** Indexes the members named in `keys`; undefined when `raw` is not a JSON object. */
  static read(raw: Buffer, keys: readonly string[]): TopLevelMembers | undefined {
    const scan = scanJsonObject(raw, new WantedKeys(keys));
    if (!scan.ok) return undefined;
    return new TopLevelMembers(raw, scan.object.members, scan.object.memberCount, scan.object.closeAt);
  }

  /** The raw JSON text of a member's value (the last of duplicates, as JSON.parse reads it). */
  text(key: string): string | undefined {
    for (let i = this.#members.length - 1; i >= 0; i--) {
      const m = this.#members[i]!;
      if (m.key === key) return this.#raw.toString('utf8', m.valueStart, m.end);
    }
    return undefined;
  }

  /**
   * The body without every occurrence of the `remove` keys (which must have been read), with `append`'s members
   * (serialised JSON values) added before the closing brace.
   */
  edit(remove: readonly string[], append: Readonly<Record<string, string>>): Buffer {
    const gone = this.#members.filter((m) => remove.includes(m.key));
    const cuts: { from: number; to: number }[] = [];
    // A member goes with the comma before it, unless nothing before it survives: then with the comma after it.
    let leading = false;
    let previousEnd = -1;
    for (const m of gone) {
      const before = lastNonSpaceBefore(this.#raw, m.start);
      const adjacent: boolean = lastNonSpaceBefore(this.#raw, before) === previousEnd - 1;
      leading = this.#raw[before] === OPEN_BRACE || (leading && adjacent);
      previousEnd = m.end;
      if (!leading) {
        cuts.push({ from: before, to: m.end });
        continue;
      }
      const after = skipJsonSpace(this.#raw, m.end);
      cuts.push({ from: m.start, to: this.#raw[after] === COMMA ? skipJsonSpace(this.#raw, after + 1) : m.end });
    }
    const survivors = this.#memberCount - gone.length;
    const added = Object.entries(append)
      .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
      .join(',');
    const parts: Buffer[] = [];
    let at = 0;
    for (const c of cuts) {
      parts.push(this.#raw.subarray(at, c.from));
      at = c.to;
    }
    parts.push(this.#raw.subarray(at, this.#closeAt));
    if (added !== '') parts.push(Buffer.from(survivors > 0 ? `,${added}` : added, 'utf8'));
    parts.push(this.#raw.subarray(this.#closeAt));
    return Buffer.concat(parts);
  }
}

/** The offset of the last non-whitespace byte before `i`. */
function lastNonSpaceBefore(bytes: Buffer, i: number): number {
  let at = i - 1;
  while (at >= 0 && (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)) at--;
  return at;
}
