// YAML parser messages without the manifest's own text. The `yaml` library quotes source in some messages
// ("Block scalar header includes extra characters: >sk-…", "Unresolved tag: !…", "Unexpected … in flow map"),
// and a manifest may be a Secret, so a quoted fragment can be a key. Messages are logged and printed by `check`;
// they keep the error kind and the caller keeps file:line, which is all a reader needs to find the typo.

/** Replaces what stands for quoted source text. */
const ELIDED = '…';

/**
 * The library's message without quoted source: the first line only, cut before the first "word: " (the library's
 * way of appending the offending text), then every word that also occurs in `nearby` (the lines the error
 * spans) is elided, which catches quotes placed mid-sentence. Words of up to 2 characters are kept: they are
 * the library's punctuation ("end with a ]") and no secret fits in them.
 */
export function scrubParserMessage(message: string, nearby: string): string {
  const firstLine = message.split('\n', 1)[0]!;
  const cut = firstLine.search(/\S: /) + 1; // "…characters: >sk-…" is cut; "Missing , or : between" is prose
  const prose = (cut > 0 ? firstLine.slice(0, cut) : firstLine).trim();
  return prose
    .split(/\s+/)
    .map((word) => {
      const bare = word.replace(/^["'`]+|["'`.,;]+$/g, '');
      return bare.length > 2 && nearby.includes(bare) ? ELIDED : word;
    })
    .join(' ');
}
