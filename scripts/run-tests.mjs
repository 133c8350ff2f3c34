// The README's test command: lint, typecheck, then vitest, ending with the plain line "N passed, N failed" that CI reads
// (vitest's own summary is not read by CI). Exit code is vitest's (or tsc's).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonClients } from './py-clients.mjs';

/** Runs a command with its output collected, so that concurrent steps do not interleave their lines. */
function run(args) {
  return new Promise((resolve) => {
    const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => out.push(b));
    child.on('close', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0), output: Buffer.concat(out) }));
    child.on('error', (err) => resolve({ status: 1, output: Buffer.from(`${err.message}\n`) }));
  });
}

// Lint and format (biome.jsonc), unused files, exports and dependencies (knip.json), and the typecheck, side by
// side (none writes, and together they take about as long as the typecheck alone): any of them failing stops the
// run before the tests. Each step's output is printed whole, in this order.
const steps = [
  ['lint', ['biome', 'check']],
  ['unused code', ['knip']],
  ['typecheck', ['tsc', '-p', 'tsconfig.json', '--noEmit']],
];
const results = await Promise.all(steps.map(([, args]) => run(args)));
let checksFailed = 0;
steps.forEach(([what], i) => {
  const { status, output } = results[i];
  process.stdout.write(output);
  if (status !== 0) {
    console.log(`${what} failed`);
    checksFailed ||= status;
  }
});
if (checksFailed) {
  console.log('0 passed, 1 failed');
  process.exit(checksFailed);
}
// The Python clients some tests drive the gateway with; those tests fail (they do not skip) when this cannot set them up.
ensurePythonClients();
const dir = mkdtempSync(join(tmpdir(), 'mg-tests-'));
// MG_TEST_REPORT=FILE keeps vitest's JSON report there (per-file and per-test durations, for measuring the suite).
const out = process.env.MG_TEST_REPORT || join(dir, 'vitest.json');
rmSync(out, { force: true }); // a report left by an earlier run must not be counted as this one's
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
