// YAML manifest text → objects with file and line, or errors with file and line. Shared by the file source and
// `model-gateway check`, so both read manifests exactly the same way.
import { isNode, isSeq, LineCounter, parseAllDocuments } from 'yaml';
import type { RawObject, SourcedObject } from './resources.js';

export interface ManifestError {
  file: string;
  line: number;
  message: string;
}

export interface ParsedManifests {
  objects: SourcedObject[];
  errors: ManifestError[];
}

/** Parses one multi-document YAML file. `kind: List` documents are flattened as kubectl does. */
export function parseManifests(text: string, file: string): ParsedManifests {
  const lineCounter = new LineCounter();
  const objects: SourcedObject[] = [];
  const errors: ManifestError[] = [];
  for (const doc of parseAllDocuments(text, { lineCounter, prettyErrors: false })) {
    const line = (offset: number | undefined) => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
    if (doc.errors.length > 0) {
      for (const e of doc.errors) errors.push({ file, line: line(e.pos[0]), message: e.message.split('\n')[0]! });
      continue;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue; // empty document
    const docLine = line(doc.contents?.range?.[0]);
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

    /** The line of the deepest node that exists along a field path (a missing field points at its parent). */
    function fieldLine(prefix: readonly PropertyKey[]) {
      return (path: readonly PropertyKey[]): number | undefined => {
        for (let n = path.length; n >= 0; n--) {
          const node = doc.getIn([...prefix, ...path.slice(0, n)], true);
          if (isNode(node) && node.range) return line(node.range[0]);
        }
        return undefined;
      };
    }
  }
  return { objects, errors };

  function accept(value: unknown, line: number, lineOf: (path: readonly PropertyKey[]) => number | undefined): void {
    const obj = value as RawObject | null;
    if (!obj || typeof obj !== 'object' || Array.isArray(obj) || typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string') {
      errors.push({ file, line, message: 'missing apiVersion or kind' });
      return;
    }
    objects.push({ object: obj, source: { file, line, lineOf } });
  }
}
