// The README's test command: lint, typecheck, then vitest, ending with the plain line "N passed, N failed" that CI reads
// (vitest's own summary is not read by CI). Exit code is vitest's (or tsc's).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonClients } from './py-clients.mjs';

// Lint and format (biome.jsonc), unused files, exports and dependencies (knip.json), then the typecheck: any of
// them failing stops the run before the tests.
for (const [what, args] of [
  ['lint', ['biome', 'check']],
  ['unused code', ['knip']],
  ['typecheck', ['tsc', '-p', 'tsconfig.json', '--noEmit']],
]) {
  const step = spawnSync('npx', args, { stdio: 'inherit' });
  if (step.status !== 0) {
    console.log(`${what} failed`);
    console.log('0 passed, 1 failed');
    process.exit(step.status ?? 1);
  }
}
// The Python clients some tests drive the gateway with; those tests fail (they do not skip) when this cannot set them up.
ensurePythonClients();
const dir = mkdtempSync(join(tmpdir(), 'mg-tests-'));
const out = join(dir, 'vitest.json');
const vitest = spawnSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
let passed = 0;
let failed = 0;
try {
  const report = JSON.parse(readFileSync(out, 'utf8'));
  passed = report.numPassedTests;
  // A suite that failed without a failing test (an import error, a crashed hook) counts once; suites whose
  // tests failed are already counted through those tests.
  const brokenSuites = report.testResults.filter((r) => r.status === 'failed' && !r.assertionResults.some((a) => a.status === 'failed')).length;
  failed = report.numFailedTests + brokenSuites;
} catch {
  failed = 1; // no report means the run itself broke
}
rmSync(dir, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(vitest.status === 0 && failed === 0 ? 0 : vitest.status || 1);
