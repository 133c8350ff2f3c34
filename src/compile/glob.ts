// Model patterns in Groups and tokens: exact names, or globs with * (any run, "/" included) and ? (one char).
// Compiled once per table build, never per request.

export type ModelMatcher = (model: string) => boolean;

function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

function compileGlob(pattern: string): ModelMatcher {
  if (!isGlob(pattern)) return (m) => m === pattern;
  const re = new RegExp(
    '^' +
      pattern
        .split('')
        .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('') +
      '$',
    's',
  );
  return (m) => re.test(m);
}

/** A matcher for a list of patterns (true when any matches). */
export function compilePatterns(patterns: readonly string[]): ModelMatcher {
  const exact = new Set(patterns.filter((p) => !isGlob(p)));
  const globs = patterns.filter(isGlob).map(compileGlob);
  return (m) => exact.has(m) || globs.some((g) => g(m));
}
