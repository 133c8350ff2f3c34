// The tokenizer behind usage estimates: o200k_base (the GPT-4o / GPT-4.1 / GPT-5 encoding) from gpt-tokenizer,
// loaded on the first estimate rather than at start-up: it adds ~17 MB of heap, and most gateways rarely need it
// (upstreams report usage; estimates are for streams cut short and providers that omit it). Other model families
// tokenize differently, so counts for them are approximate; they are marked estimated either way.

/** Tokens in a text. */
export type TokenCounter = (text: string) => number;

let counter: TokenCounter | undefined;
let loading: Promise<TokenCounter> | undefined;

/**
 * BPE time grows with the square of a word's length: one 64 KiB run without spaces took 1.9 s to count. Text is
 * counted in pieces of at most PIECE characters, cut after a space where there is one, which keeps a run's cost
 * linear and changes the count of ordinary text by well under 1%.
 */
const PIECE = 1024;

function* pieces(text: string): Generator<string> {
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + PIECE);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > i) end = space + 1;
    }
    yield text.slice(i, end);
    i = end;
  }
}

/** The counter when loaded, else a promise of it (the first call starts the load). */
export function tokenCounter(): TokenCounter | Promise<TokenCounter> {
  if (counter) return counter;
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => {
    // Text that spells a special token (<|endoftext|>) is counted as text, as upstreams do with user content.
    const options = { disallowedSpecial: new Set<string>() };
    counter = (text) => {
      let n = 0;
      for (const piece of pieces(text)) n += m.countTokens(piece, options);
      return n;
    };
    return counter;
  });
  return loading;
}
