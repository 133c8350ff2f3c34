// Reads manifests from files and directories (recursively, *.yaml / *.yml / *.json), in a stable order.
// The file source and `model-gateway check` both read through here.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
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
      if (e.isDirectory()) await walk(full);
      else if (MANIFEST_FILE.test(e.name) && (e.isFile() || (e.isSymbolicLink() && (await isFile(full))))) files.push(full);
    }
  };
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) await walk(p);
    else files.push(p);
  }
  // A file named twice (a directory and a file inside it) is read once, not reported as a duplicate of itself.
  const seen = new Set<string>();
  return files.filter((f) => !seen.has(resolve(f)) && seen.add(resolve(f)));
}

// A mounted ConfigMap's files are symlinks (routes.yaml -> ..data/routes.yaml); follow links to files only, as
// following links to directories could loop.
async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false; // a dangling link
  }
}

/**
 * Parses the text of one manifest file (or stdin). A file with any error contributes no objects: half a file is
 * worse than the last good version of it.
 */
export function readManifestText(text: string, file: string): ParsedManifests {
  const parsed = parseManifests(text, file);
  return parsed.errors.length > 0 ? { objects: [], errors: parsed.errors } : parsed;
}

/**
 * Parses every manifest file under `paths`. A file that cannot be read or parsed contributes errors (with
 * file and line) and none of its objects; other files are unaffected. `display` names files in messages.
 */
export async function readManifestFiles(
  paths: readonly string[],
  display: (file: string) => string = (f) => relative(process.cwd(), f) || f,
): Promise<ParsedManifests> {
  const out: ParsedManifests = { objects: [], errors: [] };
  for (const file of await listManifestFiles(paths)) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      out.errors.push({ file: display(file), line: 1, message: `cannot read: ${(err as Error).message}` });
      continue;
    }
    const parsed = readManifestText(text, display(file));
    out.errors.push(...parsed.errors);
    out.objects.push(...parsed.objects);
  }
  return out;
}
