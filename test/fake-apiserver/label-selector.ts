// Kubernetes label selectors as the API server parses them: equality (a=b, a==b, a!=b), set (a in (x,y),
// a notin (x)) and existence (a, !a), comma-separated and ANDed.
type Labels = Record<string, string> | undefined;
export type LabelMatcher = (labels: Labels) => boolean;

export function parseLabelSelector(text: string | null | undefined): LabelMatcher {
  if (!text?.trim()) return () => true;
  const terms = splitTerms(text).map(parseTerm);
  return (labels) => terms.every((t) => t(labels ?? {}));
}

function splitTerms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function parseTerm(term: string): (labels: Record<string, string>) => boolean {
  let m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (m) {
    const [, key, op, list] = m as unknown as [string, string, string, string];
    const values = new Set(
      list
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    );
    return op === 'in' ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l) || !values.has(l[key]!);
  }
  m = /^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/.exec(term);
  if (m) {
    const [, key, op, value] = m as unknown as [string, string, string, string];
    return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  m = /^(!?)([\w./-]+)$/.exec(term);
  if (m) {
    const [, not, key] = m as unknown as [string, string, string];
    return not ? (l) => !(key in l) : (l) => key in l;
  }
  throw new Error(`unable to parse requirement: ${term}`);
}
