// Paths and readers shared by the chart, image and script tests.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CHART_DIR = join(ROOT, 'charts', 'model-gateway');
export const CRD_CHART_DIR = join(ROOT, 'charts', 'model-gateway-crds');

export function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Parses one YAML document strictly: duplicate keys and syntax errors throw. */
export function readYaml<T = unknown>(path: string): T {
  return parse(read(path), { uniqueKeys: true, prettyErrors: true }) as T;
}

/** Every document of a multi-document YAML file; throws on the first error in any of them. */
export function readYamlDocuments(path: string): unknown[] {
  const docs = parseAllDocuments(read(path), { uniqueKeys: true, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`);
  return list.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
}

/** Files under dir (repository-relative), recursively, skipping dependency and build folders. */
export function listFiles(dir = '.', skip = new Set(['node_modules', '.git', 'dist', 'coverage'])): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const rel = dir === '.' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(rel, skip));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}
