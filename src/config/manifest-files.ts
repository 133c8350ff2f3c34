// Reads manifests from files and directories (recursively, *.yaml / *.yml / *.json), in a stable order.
// The file source and `model-gateway check` both read through here.
import { readdir, readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { parseManifests, type ParsedManifests } from './manifests.js';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** Lists manifest files under each path (a file is taken as is), skipping dot-files and dot-directories. */
export async function listManifestFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue; // editors' swap files, ..data symlinks of mounted ConfigMaps
      const full = join(dir, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        // Mounted ConfigMaps and Secrets are symlinks (name -> ..data/name); follow them, skip dangling ones.
        const target = await stat(full).catch(() => undefined);
        isDir = target?.isDirectory() ?? false;
        isFile = target?.isFile() ?? false;
      }
      if (isDir) await walk(full);
      else if (isFile && MANIFEST_FILE.test(e.name)) files.push(full);
    }
  };
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) await walk(p);
    else files.push(p);
  }
  return files;
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
  return parseManifests(text, display(file));
}

/**
 * Parses every manifest file under `paths`. A file that cannot be read or parsed contributes errors (with
 * file and line) and none of its objects; other files are unaffected. `display` names files in messages.
 */
export async function readManifestFiles(
  paths: readonly string[],
  display: (file: string) => string = displayPath,
): Promise<ParsedManifests> {
  const out: ParsedManifests = { objects: [], errors: [] };
  for (const file of await listManifestFiles(paths)) {
    const parsed = await readManifestFile(file, display);
    // A file with any error contributes no objects: half a file is worse than the last good version of it.
    if (parsed.errors.length > 0) out.errors.push(...parsed.errors);
    else out.objects.push(...parsed.objects);
  }
  return out;
}
