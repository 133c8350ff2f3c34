// Reads manifests from files and directories (recursively, *.yaml / *.yml / *.json), in a stable order.
// The file source and `model-gateway check` both read through here.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
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
      else if (e.isFile() && MANIFEST_FILE.test(e.name)) files.push(full);
    }
  };
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) await walk(p);
    else files.push(p);
  }
  return files;
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
    const parsed = parseManifests(text, display(file));
    // A file with any error contributes no objects: half a file is worse than the last good version of it.
    if (parsed.errors.length > 0) out.errors.push(...parsed.errors);
    else out.objects.push(...parsed.objects);
  }
  return out;
}
