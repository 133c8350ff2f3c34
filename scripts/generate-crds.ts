// Writes crds/*.yaml from the zod schemas: `npm run generate:crds`. A test fails when the committed files differ.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCrdFiles } from '../src/compile/crd/crd-definitions.js';

const dir = join(import.meta.dirname, '..', 'crds');
await mkdir(dir, { recursive: true });
const files = buildCrdFiles();
// Remove CRD files of kinds that no longer exist, so crds/ is exactly what the schemas say.
for (const name of await readdir(dir)) {
  if (name.endsWith('.yaml') && !files.some((f) => f.file === name)) await rm(join(dir, name));
}
for (const f of files) await writeFile(join(dir, f.file), f.text);
console.log(`wrote ${files.map((f) => `crds/${f.file}`).join(', ')}`);
