// Copies the repository's crds/*.yaml into the CRD chart (charts/model-gateway-crds/files/) byte for byte and
// removes copies whose source is gone. `--check` changes nothing and exits 1 when the copies differ.
//   npm run sync:crds            npm run sync:crds -- --check
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const CRD_SOURCE_DIR = join(ROOT, 'crds');
export const CRD_CHART_DIR = join(ROOT, 'charts', 'model-gateway-crds', 'files');

export interface CrdDrift {
  /** In crds/ but not in the chart. */
  missing: string[];
  /** In both, with different bytes. */
  changed: string[];
  /** In the chart but no longer in crds/. */
  stale: string[];
}

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => e.name)
    .sort();
}

export function crdDrift(sourceDir = CRD_SOURCE_DIR, chartDir = CRD_CHART_DIR): CrdDrift {
  const source = yamlFiles(sourceDir);
  const chart = new Set(yamlFiles(chartDir));
  const drift: CrdDrift = { missing: [], changed: [], stale: [] };
  for (const name of source) {
    if (!chart.has(name)) drift.missing.push(name);
    else if (!readFileSync(join(sourceDir, name)).equals(readFileSync(join(chartDir, name)))) drift.changed.push(name);
    chart.delete(name);
  }
  drift.stale = [...chart].sort();
  return drift;
}

export function syncCrds(sourceDir = CRD_SOURCE_DIR, chartDir = CRD_CHART_DIR): CrdDrift {
  const drift = crdDrift(sourceDir, chartDir);
  mkdirSync(chartDir, { recursive: true });
  for (const name of [...drift.missing, ...drift.changed]) copyFileSync(join(sourceDir, name), join(chartDir, name));
  for (const name of drift.stale) rmSync(join(chartDir, name));
  return drift;
}

function main(args: string[]): number {
  if (yamlFiles(CRD_SOURCE_DIR).length === 0) {
    process.stderr.write(`sync:crds: no CRD files in ${CRD_SOURCE_DIR}\n`);
    return 1;
  }
  const check = args.includes('--check');
  const drift = check ? crdDrift() : syncCrds();
  const lines = [
    ...drift.missing.map((n) => `${check ? 'missing' : 'copied'} ${n}`),
    ...drift.changed.map((n) => `${check ? 'differs' : 'updated'} ${n}`),
    ...drift.stale.map((n) => `${check ? 'stale' : 'removed'} ${n}`),
  ];
  for (const line of lines) process.stdout.write(`${line}\n`);
  if (lines.length === 0) process.stdout.write('CRD chart copies are identical to crds/\n');
  else if (check) process.stdout.write('run `npm run sync:crds` to update charts/model-gateway-crds/files/\n');
  return check && lines.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
