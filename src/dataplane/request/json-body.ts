// A JSON request body as the gateway holds it: the client's bytes, checked and indexed once by the scanner
// (json-scan.ts) for the few top-level members the gateway reads, and rewritten by splicing byte ranges. No
// tree is built and nothing is re-serialised, so a large body costs a linear scan that yields to other
// requests, and the bytes the upstream receives are the client's except for the members the gateway sets.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { errors } from '../../model/errors.js';
import { JsonObjectScanner, MAX_DEPTH, type ScannedObject, type ScanResult, skipJsonSpace, type TopLevelMember, type WantedKeys } from './json-scan.js';

/**
 * Bodies up to this size are scanned in one go; larger ones in slices of it with a turn of the event loop in
 * between (a slice takes about a millisecond), so other requests are served while a large body is checked.
 */
export const SCAN_SLICE_BYTES = 256 * 1024;

/**
 * Checks `raw` is a JSON object and indexes its top-level members named in `wanted`; 400 invalid_json if not
 * (thrown). A body of one slice is read at once, without a promise (an async call and its await cost ~300 bytes of
 * heap); a larger one over several turns.
 */
export function readJsonBody(raw: Buffer, wanted: WantedKeys): JsonBody | Promise<JsonBody> {
  const scanner = new JsonObjectScanner(raw, wanted);
  const result = scanner.step(SCAN_SLICE_BYTES);
  return result === undefined ? readInTurns(raw, scanner) : bodyOf(raw, result);
}

async function readInTurns(raw: Buffer, scanner: JsonObjectScanner): Promise<JsonBody> {
  let result: ScanResult | undefined;
  do {
    await nextTurn();
    result = scanner.step(SCAN_SLICE_BYTES);
  } while (result === undefined);
  return bodyOf(raw, result);
}

function bodyOf(raw: Buffer, result: ScanResult): JsonBody {
  if (result.ok) return new JsonBody(raw, result.object);
  if (result.reason === 'not-an-object') throw errors.notAnObject();
  throw result.reason === 'too-deep' ? errors.nestedTooDeeply(MAX_DEPTH) : errors.malformedJson();
}

export class JsonBody {
  readonly raw: Buffer;
  readonly #object: ScannedObject;

  constructor(raw: Buffer, object: ScannedObject) {
    this.raw = raw;
    this.#object = object;
  }

  /** The member as JSON.parse reads it: the last of duplicates. Only members named when the body was read are known. */
  member(key: string): TopLevelMember | undefined {
    const members = this.#object.members;
    for (let i = members.length - 1; i >= 0; i--) if (members[i]!.key === key) return members[i];
    return undefined;
  }

  /**
   * True when the key appears once, spelled without escapes: every JSON parser then reads the same member. With
   * duplicates, parsers disagree on which one counts (JSON.parse keeps the last, others the first).
   */
  isPlain(key: string): boolean {
    let count = 0;
    for (const m of this.#object.members) if (m.key === key && (++count > 1 || m.escapedKey)) return false;
    return count === 1;
  }

  /**
   * The members read from this body that are not plain (see isPlain), each with the value the gateway read (the
   * last): set them with with() and the upstream reads what the gateway read, whatever its parser does with
   * duplicates. Undefined when there are none (the usual case: nothing allocated).
   */
  ambiguousMembers(): Record<string, string> | undefined {
    let out: Record<string, string> | undefined;
    for (const m of this.#object.members) {
      if (out?.[m.key] !== undefined || this.isPlain(m.key)) continue;
      const last = this.member(m.key)!;
      (out ??= {})[m.key] = this.raw.toString('utf8', last.valueStart, last.end);
    }
    return out;
  }

  /** The member's value as its raw JSON text, whatever its type. */
  text(key: string): string | undefined {
    const m = this.member(key);
    return m === undefined ? undefined : this.raw.toString('utf8', m.valueStart, m.end);
  }

  /** The member's value when it is a JSON string, else undefined. */
  string(key: string): string | undefined {
    const m = this.member(key);
    if (m === undefined || this.raw[m.valueStart] !== 0x22 /* " */) return undefined;
    return JSON.parse(this.raw.toString('utf8', m.valueStart, m.end)) as string;
  }

  /** The member's value when it is a non-negative integer literal that is a safe integer, else undefined. */
  integer(key: string): number | undefined {
    const m = this.member(key);
    if (m === undefined || m.end - m.valueStart > 16) return undefined;
    const text = this.raw.toString('latin1', m.valueStart, m.end);
    return /^(0|[1-9][0-9]*)$/.test(text) ? Number(text) : undefined;
  }

  /** Whether the member's value is the literal `true`. */
  isTrue(key: string): boolean {
    const m = this.member(key);
    return m !== undefined && m.end - m.valueStart === 4 && this.raw.toString('latin1', m.valueStart, m.end) === 'true';
  }

  /**
   * The body with each member of `set` given a value (serialised JSON): the last of its duplicates is replaced
   * and written with a plain key, the others are removed; an absent member is added at the end. Every other
   * byte is the client's.
   */
  with(set: Readonly<Record<string, string>>): Buffer {
    const edits: { from: number; to: number; text: string }[] = [];
    let added = '';
    for (const [key, value] of Object.entries(set)) {
      const member = `${JSON.stringify(key)}:${value}`;
      const same = this.#object.members.filter((m) => m.key === key);
      const last = same.pop();
      if (last === undefined) {
        added += `${this.#object.memberCount > 0 || added !== '' ? ',' : ''}${member}`;
        continue;
      }
      // An earlier duplicate goes with the comma after it (a later member of the same key always follows).
      for (const m of same) edits.push({ from: m.start, to: this.#pastComma(m.end), text: '' });
      edits.push({ from: last.start, to: last.end, text: member });
    }
    if (added !== '') edits.push({ from: this.#object.closeAt, to: this.#object.closeAt, text: added });
    edits.sort((a, b) => a.from - b.from);
    const parts: Buffer[] = [];
    let at = 0;
    for (const e of edits) {
      parts.push(this.raw.subarray(at, e.from), Buffer.from(e.text, 'utf8'));
      at = e.to;
    }
    parts.push(this.raw.subarray(at));
    return Buffer.concat(parts);
  }

  /** The offset after the comma (and whitespace) that follows a member ending at `end`. */
  #pastComma(end: number): number {
    let at = end;
    while (this.raw[at] !== 0x2c /* , */) at++;
    at++;
    return skipJsonSpace(this.raw, at);
  }
}
