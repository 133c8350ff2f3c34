// Token counts for usage estimates, approximated without a tokenizer: a BPE tokenizer costs far more CPU than the
// stream it estimates (a worker running o200k_base doubled a 20-chunk stream's CPU), while an estimate needs only to
// be close. Text is cut into pieces the way o200k_base's pre-tokenizer cuts it (words, groups of up to 3 digits,
// runs of punctuation, spaces and line ends), and each piece is priced by what it holds, with weights fitted to
// gpt-tokenizer's o200k_base counts on bench/token-corpus (bench/token-estimate.ts measures how close). Pure.

/** What a text holds, as the weights price it (indices into FEATURES). */
const WORDS = 0;
const LONG_WORD_LETTERS = 1;
const LATIN_LETTERS = 2;
const GREEK_CYRILLIC_LETTERS = 3;
const OTHER_LETTERS = 4;
const CJK = 5;
const DIGIT_GROUPS = 6;
const PUNCTUATION = 7;
const PUNCTUATION_EXTRA = 8;
const LINE_ENDS = 9;
const SPACES = 10;
const SYMBOLS = 11;
const ASTRAL = 12;
export const FEATURES = 13;

/** Letters of a word (Latin, Greek, Cyrillic) beyond this many are priced apart (common words of up to this length are one token). */
const SHORT_WORD = 6;

/** Tokens per unit of each feature, fitted by bench/token-estimate.ts (least squares on relative error). */
export const WEIGHTS: readonly number[] = [0.817, 0.26, 2.068, 0.121, 0.219, 0.513, 1.131, 0.794, 0.331, 0.474, 0.876, 2.114, 1.081];

// What the previous character was, for where pieces start.
const NONE = 0;
const LOWER = 1;
const UPPER = 2;
const LETTER = 3;
const DIGIT = 4;
const PUNCT = 5;
const SPACE = 6;
const NEWLINE = 7;

/** Tallies the features of text fed one UTF-16 code unit at a time (a character split across feeds is fine). */
export class TokenTally {
  readonly features = new Float64Array(FEATURES);
  #prev = NONE;
  /** ASCII letters in the current word, digits in the current number, characters in the current run. */
  #run = 0;

  /** Adds a string. */
  text(s: string): void {
    for (let i = 0; i < s.length; i++) this.char(s.charCodeAt(i));
  }

  char(c: number): void {
    const f = this.features;
    if (c < 0x80) {
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) {
        const upper = c <= 0x5a;
        // A word starts after a non-letter, and at a capital after lower case (camelCase is two pieces).
        if (this.#prev < LOWER || this.#prev > LETTER || (upper && this.#prev === LOWER)) this.#word();
        if (++this.#run > SHORT_WORD) f[LONG_WORD_LETTERS]!++;
        this.#prev = upper ? UPPER : LOWER;
      } else if (c >= 0x30 && c <= 0x39) {
        if (this.#prev !== DIGIT) this.#end(DIGIT);
        if (this.#run++ % 3 === 0) f[DIGIT_GROUPS]!++;
      } else if (c === 0x20 || c === 0x09) {
        if (this.#prev !== SPACE) this.#end(SPACE);
        this.#run++;
      } else if (c === 0x0a || c === 0x0d) {
        // Spaces before a line end belong to it.
        if (this.#prev !== NEWLINE) {
          this.#prev = NONE;
          this.#run = 0;
          f[LINE_ENDS]!++;
        }
        this.#prev = NEWLINE;
      } else this.#punctuation(f);
      return;
    }
    if (c < 0x2000) {
      if (c < 0xc0) return this.#punctuation(f, true); // Latin-1 signs: no-break space, «, ©, °
      if (this.#prev < LOWER || this.#prev > LETTER) this.#word();
      // Latin, Greek and Cyrillic letters make words as ASCII letters do, a long one costing more.
      if (c < 0x530 && ++this.#run > SHORT_WORD) f[LONG_WORD_LETTERS]!++;
      f[c < 0x250 ? LATIN_LETTERS : c < 0x530 ? GREEK_CYRILLIC_LETTERS : OTHER_LETTERS]!++;
      this.#prev = LETTER;
    } else if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff)) {
      // Kana, ideographs, Hangul: runs without spaces, which the tokenizer splits into a token per character or two.
      if (this.#prev < LOWER || this.#prev > LETTER) this.#word();
      f[CJK]!++;
      this.#prev = LETTER;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      // The first half of a character outside the BMP (emoji, rare ideographs): several byte tokens each.
      f[ASTRAL]!++;
      this.#punctuation(f);
    } else if (c < 0xdc00 || c > 0xdfff) this.#punctuation(f, true);
  }

  /** Ends a text: what comes next does not continue its last piece. */
  end(): void {
    this.#end(NONE);
  }

  /** The tokens of what was fed (not rounded: an estimate adds its parts first). */
  tokens(): number {
    this.#end(NONE);
    let n = 0;
    for (let i = 0; i < FEATURES; i++) n += this.features[i]! * WEIGHTS[i]!;
    return n;
  }

  #word(): void {
    this.#end(LETTER);
    this.features[WORDS]!++;
  }

  #punctuation(f: Float64Array, symbol = false): void {
    if (symbol) f[SYMBOLS]!++;
    if (this.#prev === PUNCT) f[PUNCTUATION_EXTRA]!++;
    else {
      this.#end(PUNCT);
      f[PUNCTUATION]!++;
    }
  }

  /** A piece ended; `next` is the class of the character that ended it. */
  #end(next: number): void {
    // A run of spaces is a piece of its own, except its last space, which goes with a word or punctuation after it.
    if (this.#prev === SPACE && (this.#run > 1 || next === DIGIT || next === NONE)) this.features[SPACES]!++;
    this.#prev = next;
    this.#run = 0;
  }
}

/** The approximate o200k_base token count of a text. */
export function approximateTokens(text: string): number {
  if (text.length === 0) return 0;
  const t = new TokenTally();
  t.text(text);
  return Math.round(t.tokens());
}
