// A small static reader of Helm (Go text/template) files. helm is not installed here, so the tests use this to
// catch what `helm lint` would: unbalanced blocks, includes of undefined templates and .Values paths that do not
// exist in values.yaml. It does not render.

interface Action {
  /** The action's text without delimiters, trim markers and surrounding space. */
  text: string;
  line: number;
}

const ACTION = /\{\{-?\s*([\s\S]*?)\s*-?\}\}/g;

function actions(src: string): Action[] {
  const out: Action[] = [];
  for (const m of src.matchAll(ACTION)) {
    const text = m[1]!;
    if (text.startsWith('/*')) continue; // comment
    out.push({ text, line: src.slice(0, m.index).split('\n').length });
  }
  return out;
}

const OPENERS = new Set(['if', 'range', 'with', 'define', 'block']);

/** Problems with block structure: an `end` without opener, an opener without `end`, a stray `else`. */
export function blockProblems(src: string): string[] {
  const problems: string[] = [];
  const stack: Action[] = [];
  for (const a of actions(src)) {
    const word = a.text.split(/[\s(]/, 1)[0]!;
    if (OPENERS.has(word)) stack.push(a);
    else if (word === 'end') {
      if (stack.pop() === undefined) problems.push(`line ${a.line}: {{ end }} without an open block`);
    } else if (word === 'else') {
      const top = stack.at(-1);
      if (top === undefined || !/^(if|with|range)\b/.test(top.text)) problems.push(`line ${a.line}: stray else`);
    }
  }
  for (const a of stack) problems.push(`line ${a.line}: "${a.text}" is never closed`);
  return problems;
}

export function definedTemplates(src: string): string[] {
  return [...src.matchAll(/\{\{-?\s*define\s+"([^"]+)"/g)].map((m) => m[1]!);
}

export function includedTemplates(src: string): string[] {
  return [...src.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)].map((m) => m[1]!);
}

/** .Values paths the template reads, e.g. "gateway.leaderElection.enabled". */
export function valuesPaths(src: string): string[] {
  const paths = new Set<string>();
  for (const a of actions(src)) {
    for (const m of a.text.matchAll(/(?:^|[\s($])\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) paths.add(m[1]!.slice(1));
  }
  return [...paths].sort();
}

/** Whether a dotted path exists in a values object (every step a key of a mapping). */
export function hasPath(values: unknown, path: string): boolean {
  let node: unknown = values;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** Files the template reads with .Files.Get / .Files.Glob. */
export function filesRead(src: string): string[] {
  return [...src.matchAll(/\.Files\.(?:Get|Glob)\s+"([^"]+)"/g)].map((m) => m[1]!);
}
