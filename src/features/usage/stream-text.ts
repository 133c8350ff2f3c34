// The generated text of an event stream, read for an estimate without parsing its events: each `data:` line is
// walked once, and the string values of the members that hold generated text go to the tally, escapes decoded.
// JSON.parse of every event cost more than the whole estimate does now. Pure.
import type { TokenTally } from './token-count.js';

/** Members whose strings are generated text in a chat chunk's `choices[].delta` (or a completion's `choices[].text`). */
const CHOICE_TEXT: ReadonlySet<string> = new Set(['content', 'text', 'arguments', 'refusal', 'reasoning_content', 'reasoning']);
/** The Responses and transcription events' text: a string `delta` (their `.done` and completed events repeat it). */
const DELTA: ReadonlySet<string> = new Set(['delta']);
/** Anthropic's `content_block_delta` events: the delta object's text, tool input or thinking (nothing repeats them). */
const BLOCK_DELTA: ReadonlySet<string> = new Set(['text', 'partial_json', 'thinking']);
/** What \n, \r, \t, \b and \f stand for (the other escapes, \" \\ \/, for the character after the backslash). */
const ESCAPED: Readonly<Record<number, number>> = { 110: 0x0a, 114: 0x0d, 116: 0x09, 98: 0x08, 102: 0x0c };
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Feeds the tally the deltas' text of an SSE text: a chat chunk's choice members above, an event's string
 * `delta`, or an Anthropic content block delta's text. Lines cut short, `[DONE]` and other fields add what they hold of such members, or nothing.
 */
export function tallyStreamText(text: string, tally: TokenTally): void {
  let at = 0;
  // The next `"choices"`, searched again only once passed (linear in the text). With its quotes it cannot occur
  // inside a JSON string (they would be escaped): it is a member.
  let choices = -2;
  let block = -2; // the same for Anthropic's `"content_block_delta"`
  while (at < text.length) {
    let end = text.indexOf('\n', at);
    if (end === -1) end = text.length;
    // CR and CRLF line ends: a CR is JSON whitespace, and never inside a string.
    if (text.startsWith('data:', at)) {
      if (choices !== -1 && choices < at) choices = text.indexOf('"choices"', at);
      if (block !== -1 && block < at) block = text.indexOf('"content_block_delta"', at);
      const members = choices !== -1 && choices < end ? CHOICE_TEXT : block !== -1 && block < end ? BLOCK_DELTA : DELTA;
      tallyMembers(text, at + 5, end, members, tally);
    }
    at = end + 1;
  }
}

/** Feeds the tally the string values, in text[from, to), of members named in `members`, at any depth. */
function tallyMembers(text: string, from: number, to: number, members: ReadonlySet<string>, tally: TokenTally): void {
  let i = from;
  let counted = false;
  while (i < to) {
    const open = text.indexOf('"', i);
    if (open === -1 || open >= to) return;
    if (counted) {
      i = tallyString(text, open + 1, to, tally);
      counted = false;
      continue;
    }
    const close = stringEnd(text, open + 1, to);
    let j = close + 1;
    while (j < to && isSpace(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) === 0x3a) {
      // A member name: its value is counted if it is a string (the next quote, once past spaces).
      j++;
      while (j < to && isSpace(text.charCodeAt(j))) j++;
      counted = text.charCodeAt(j) === QUOTE && members.has(text.slice(open + 1, close));
      i = j;
    } else i = j;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/** Where the string whose text starts at `from` ends (its closing quote), or `to`. */
function stringEnd(text: string, from: number, to: number): number {
  for (let i = text.indexOf('"', from); i !== -1 && i < to; i = text.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return to;
}

/** Feeds the tally a JSON string's text from `from` (after its opening quote); returns where it ended. */
function tallyString(text: string, from: number, to: number, tally: TokenTally): number {
  let i = from;
  while (i < to) {
    const c = text.charCodeAt(i++);
    if (c === QUOTE) return i;
    if (c !== BACKSLASH) {
      tally.char(c);
      continue;
    }
    const e = text.charCodeAt(i++);
    if (e === 0x75) {
      // \uXXXX (a pair of them for a character outside the BMP: the tally takes code units).
      const code = Number.parseInt(text.slice(i, i + 4), 16);
      if (Number.isNaN(code)) return i;
      tally.char(code);
      i += 4;
    } else tally.char(ESCAPED[e] ?? e);
  }
  return i;
}
