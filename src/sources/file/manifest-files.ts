// Reads manifests from files and directories (recursively, *.yaml / *.yml / *.json), in a stable order.
// The file source and `model-gateway check` both read through here.
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseManifests, type ParsedManifests } from '../../compile/manifests.js';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** Lists manifest files under each path (a file is taken as is), skipping dot-files and dot-directories. */
export async function listManifestFiles(paths: readonly string[]): Promise<string[]> {
  return (await listManifestTree(paths)).files;
}

export interface ManifestTree {
  /** Manifest files in a stable order. */
  readonly files: string[];
  /**
   * Real paths of the directories whose entries make up `files`: every directory walked, and the directory
   * holding the target of each symlinked file. Watching these sees every change to `files`.
   */
  readonly dirs: string[];
}

/** listManifestFiles, plus the directories to watch for changes to what it lists. */
export async function listManifestTree(paths: readonly string[]): Promise<ManifestTree> {
  const files: string[] = [];
  const visited = new Set<string>(); // real paths of directories walked, so a symlink loop cannot recurse forever
  const linkedDirs = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    const real = await realpath(dir).catch(() => dir);
    if (visited.has(real)) return;
    visited.add(real);
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue; // editors' swap files, ..data symlinks of mounted ConfigMaps
      const full = join(dir, e.name);
      // A mounted ConfigMap's entries are symlinks (routes.yaml -> ..data/routes.yaml, and a folder of an
      // `items[].path` likewise): follow them, skipping dangling ones.
      const target = e.isSymbolicLink() ? await stat(full).catch(() => undefined) : e;
      if (target?.isDirectory()) await walk(full);
      else if (target?.isFile() && MANIFEST_FILE.test(e.name)) {
        files.push(full);
        if (e.isSymbolicLink()) {
          const targetPath = await realpath(full).catch(() => undefined);
          if (targetPath) linkedDirs.add(dirname(targetPath));
        }
      }
    }
  };
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) await walk(p);
    else files.push(p);
  }
  // A file named twice (a directory and a file inside it) is read once, not reported as a duplicate of itself.
  const seen = new Set<string>();
  return { files: files.filter((f) => !seen.has(resolve(f)) && seen.add(resolve(f))), dirs: [...new Set([...visited, ...linkedDirs])] };
}

/**
 * Parses the text of one manifest file (or stdin). A file with any error contributes no objects: half a file is
 * worse than the last good version of it.
 */
export function readManifestText(text: string, file: string): ParsedManifests {
  const parsed = parseManifests(text, file);
  return parsed.errors.length > 0 ? { objects: [], errors: parsed.errors } : parsed;
}

/** Default display name of a file in messages: relative to the working directory when inside it, else absolute. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

/** Reads and parses one manifest file; an unreadable file is one error at line 1. */
export async function readManifestFile(file: string, display: (file: string) => string = displayPath): Promise<ParsedManifests> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { objects: [], errors: [{ file: display(file), line: 1, message: `cannot read: ${(err as Error).message}` }] };
  }
  return readManifestText(text, display(file));
}

/**
 * Parses every manifest file under `paths`. A file that cannot be read or parsed contributes errors (with
 * file and line) and none of its objects; other files are unaffected. `display` names files in messages.
 */
export async function readManifestFiles(paths: readonly string[], display: (file: string) => string = displayPath): Promise<ParsedManifests> {
  const out: ParsedManifests = { objects: [], errors: [] };
  for (const file of await listManifestFiles(paths)) {
    const parsed = await readManifestFile(file, display);
    out.errors.push(...parsed.errors);
    out.objects.push(...parsed.objects);
  }
  return out;
}
