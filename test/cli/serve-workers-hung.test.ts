// `serve --workers 2` through the real executable, stopped while one worker is hung (SIGSTOP: it cannot act on the
// SIGTERM the primary sends): the other drains and exits, and the primary kills the hung one once the drain timeout
// plus its margin (5 s) have passed, names it in an error line, and exits 1 instead of waiting for Kubernetes' SIGKILL.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { type CliRun, runCli } from '../support/spawn-cli.js';

let r: CliRun | undefined;
let dir: string | undefined;
let hung: number | undefined;
afterEach(async () => {
  if (hung !== undefined) {
    try {
      process.kill(hung, 'SIGKILL');
    } catch {} // already killed by the primary
  }
  if (r?.child.exitCode === null) r.child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('kills a worker that outlives the drain timeout plus the margin, names it, and exits 1', async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-workers-hung-'));
  await writeFile(
    join(dir, 'all.yaml'),
    'apiVersion: modelgateway.io/v1alpha1\nkind: ModelRoute\nmetadata: {name: chat}\nspec:\n  backends: [{name: demo, baseURL: "demo://"}]\n',
  );
  const port = await freePort();
  const args = ['serve', '--config', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', '0', '--workers', '2', '--drain-timeout', '1s'];
  const run = (r = runCli(args));
  await Promise.all([1, 2].map((w) => run.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === w, 20_000)));
  const workers = execFileSync('pgrep', ['-P', String(run.child.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);
  expect(workers).toHaveLength(2);
  hung = workers[0]!;
  process.kill(hung, 'SIGSTOP');

  const signalledAt = Date.now();
  run.child.kill('SIGTERM');
  const output = () => `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`;
  expect(await run.exited, output()).toBe(1);
  const killed = await run.waitForLog((l) => l.msg === 'a worker did not stop in time; killing it');
  expect(killed.pid, output()).toBe(hung);
  expect(killed.time as number, output()).toBeGreaterThanOrEqual(signalledAt + 1_000 + 5_000 - 100);
  expect(run.stdout().match(/"msg":"a worker did not stop in time/g), output()).toHaveLength(1); // not the one that drained
  expect(run.stdout().match(/drained: every in-flight request finished/g), output()).toHaveLength(1);
  expect(await run.waitForLog((l) => l.msg === 'all workers stopped')).toMatchObject({ exitCode: 1 });
}, 30_000);
