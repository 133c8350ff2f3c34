// A fingerprint of everything a chart renders from (every file under the chart directory). Rendered snapshots in
// test/chart/rendered/ carry it in their first line, so a chart edit without `npm run render:chart` fails the
// tests instead of leaving them to check stale output.
//   npx tsx scripts/chart-inputs.ts charts/model-gateway   -> prints the sha256
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const SNAPSHOT_HEADER = '# chart-inputs-sha256: ';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []))
    .sort();
}

export function chartInputsHash(chartDir: string): string {
  const hash = createHash('sha256');
  for (const file of files(chartDir)) {
    hash.update(relative(chartDir, file).split('\\').join('/')).update('\0');
    hash.update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: chart-inputs.ts CHART_DIR\n');
    process.exitCode = 2;
  } else process.stdout.write(`${chartInputsHash(resolve(dir))}\n`);
}
