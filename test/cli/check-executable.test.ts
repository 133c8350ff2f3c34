// The `model-gateway check` executable itself, for what only a process shows: cli.ts dispatches `check`, its
// result becomes the exit code, "-" reads the real standard input, and nothing lands on stderr but usage errors.
// The output in detail is check.test.ts's (runCheck in-process).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEntry, REPO_ROOT } from '../support/spawn-cli.js';

const FIXTURES = 'test/fixtures/check';

function check(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliEntry(), 'check', ...args], { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe('model-gateway check (executable)', () => {
  it('exits 0 on a clean set, with the summary on stdout and nothing on stderr', async () => {
    const run = await check([`${FIXTURES}/clean`]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^OK: 6 objects \(6 ready, 0 not ready\), 0 warnings, 0 input errors; 1 object of other kinds ignored$/m);
  });

  it('exits 1 on a broken set read from standard input, in JSON', async () => {
    const run = await check(['--output', 'json', '-'], readFileSync(`${REPO_ROOT}/${FIXTURES}/dangling-group/manifests.yaml`, 'utf8'));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).objects.find((o: { name: string }) => o.name === 'bob')).toMatchObject({
      reason: 'GroupNotFound',
      file: '<stdin>',
      line: 15,
    });
  });

  it('exits 2 on a usage error with one line on stderr, and 0 with --help', async () => {
    const bad = await check(['--frobnicate', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe("model-gateway check: Unknown option '--frobnicate'\nRun 'model-gateway check --help' for usage.\n");
    const help = await check(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit status:');
  });
});
