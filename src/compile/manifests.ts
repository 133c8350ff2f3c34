// YAML manifest text → objects with file and line, or errors with file and line. Shared by the file source and
// `model-gateway check`, so both read manifests exactly the same way.
import { Composer, isNode, isSeq, LineCounter, parseAllDocuments, Parser, visit, type Document } from 'yaml';
import { scrubParserMessage } from './parser-messages.js';
import type { RawObject, SourcedObject } from './resources.js';

interface ManifestError {
  file: string;
  line: number;
  message: string;
}

export interface ParsedManifests {
  objects: SourcedObject[];
  errors: ManifestError[];
}

/**
 * `<<: *anchor` merge keys, which kubectl reads (its YAML is 1.1) and YAML 1.2 does not: without them a manifest
 * kubectl applies would be refused here with "Unrecognized key".
 */
const YAML_OPTIONS = { merge: true } as const;

/**
 * Parses one multi-document YAML file. `kind: List` documents are flattened as kubectl does. A document that
 * fails (syntax, an alias to no anchor, an alias bomb) is one error with its line; the others still parse.
 * Messages never quote the file's text (see parser-messages.ts): the file may be a Secret.
 */
export function parseManifests(text: string, file: string): ParsedManifests {
  const lineCounter = new LineCounter();
  const objects: SourcedObject[] = [];
  const errors: ManifestError[] = [];
  const reparsed = lazyDocuments(text);
  // Documents are composed one at a time and dropped once converted, so a 10,000-document file never has
  // 10,000 YAML trees alive at once (the peak would stay in the process's RSS long after loading).
  let index = -1;
  for (const doc of new Composer(YAML_OPTIONS).compose(new Parser(lineCounter.addNewLine).parse(text))) {
    index++;
    const line = (offset: number | undefined) => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
    if (doc.errors.length > 0) {
      for (const e of doc.errors) errors.push({ file, line: line(e.pos[0]), message: scrubParserMessage(e.message, linesOf(e.pos)) });
      continue;
    }
    const docLine = line(doc.contents?.range?.[0]);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // toJS throws for what the composer lets through: `*name` with no `&name` before it, too many aliases.
      const at = unresolvedAlias(doc);
      errors.push({
        file,
        line: at === undefined ? docLine : line(at),
        message: scrubParserMessage((err as Error).message, linesOf([doc.range[0], doc.range[2]])),
      });
      continue;
    }
    if (value === null || value === undefined) continue; // empty document
    if (typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ file, line: docLine, message: 'a manifest must be a mapping with apiVersion, kind and metadata' });
      continue;
    }
    const obj = value as RawObject;
    if (obj.kind === 'List' && Array.isArray(obj.items)) {
      // Each item gets its own line, so messages point at the item rather than at the top of the List.
      const itemsNode = doc.get('items', true);
      const itemNodes = isSeq(itemsNode) ? itemsNode.items : [];
      (obj.items as unknown[]).forEach((item, i) => {
        const node = itemNodes[i];
        const itemLine = isNode(node) ? line(node.range?.[0]) : docLine;
        accept(item, itemLine, fieldLine(['items', i]));
      });
      continue;
    }
    accept(obj, docLine, fieldLine([]));

    /**
     * The line of the deepest node that exists along a field path (a missing field points at its parent). The
     * closure holds the document's index, not the parsed Document: objects live as long as the config does, and
     * a retained YAML tree is many times the size of the file's text, which is re-parsed only when a message needs
     * a field's line.
     */
    function fieldLine(prefix: readonly PropertyKey[]) {
      const docIndex = index;
      return (path: readonly PropertyKey[]): number | undefined => {
        const again = reparsed();
        const d = again.docs[docIndex];
        if (!d) return undefined;
        for (let n = path.length; n >= 0; n--) {
          const node = d.getIn([...prefix, ...path.slice(0, n)], true);
          if (isNode(node) && node.range) return again.lineCounter.linePos(node.range[0]).line;
        }
        return undefined;
      };
    }
  }
  return { objects, errors };

  /** The text of the lines an error spans (what a message could quote). */
  function linesOf([start, end]: readonly [number, number] | readonly number[]): string {
    const starts = lineCounter.lineStarts;
    const from = starts[lineCounter.linePos(start ?? 0).line - 1] ?? 0;
    const to = starts[lineCounter.linePos(end ?? start ?? 0).line] ?? text.length;
    return text.slice(from, to);
  }

  function accept(value: unknown, line: number, lineOf: (path: readonly PropertyKey[]) => number | undefined): void {
    const obj = value as RawObject | null;
    if (!obj || typeof obj !== 'object' || Array.isArray(obj) || typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string') {
      errors.push({ file, line, message: 'missing apiVersion or kind' });
      return;
    }
    objects.push({ object: obj, source: { file, line, lineOf } });
  }
}

/** Offset of the first alias in `doc` whose anchor is not defined before it. */
function unresolvedAlias(doc: Document): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.resolve(doc) !== undefined) return undefined;
      offset = node.range?.[0];
      return visit.BREAK;
    },
  });
  return offset;
}

/** The file's documents, parsed again on first use and kept only while something still holds them (WeakRef). */
function lazyDocuments(text: string): () => { docs: Document[]; lineCounter: LineCounter } {
  let ref: WeakRef<{ docs: Document[]; lineCounter: LineCounter }> | undefined;
  return () => {
    let parsed = ref?.deref();
    if (!parsed) {
      const lineCounter = new LineCounter();
      parsed = { docs: parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter, prettyErrors: false }) as Document[], lineCounter };
      ref = new WeakRef(parsed);
    }
    return parsed;
  };
}
