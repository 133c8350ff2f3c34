// `serve --workers 2` through the real executable when workers keep dying after they were ready (SIGKILL, as an
// out-of-memory loop does): the replacements come after a delay that doubles for a slot dying young, and the third
// death within the restart window makes the primary stop the rest and exit 1, so Kubernetes sees a crash loop.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { type CliRun, runCli } from '../support/spawn-cli.js';

let r: CliRun | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (r?.child.exitCode === null) r.child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

const isReady = (worker: number) => (l: Record<string, unknown>) => l.msg === 'first config loaded; ready' && l.worker === worker;
const died = (worker: number) => (l: Record<string, unknown>) => l.msg === 'a worker died; starting a replacement' && l.worker === worker;
const children = (run: CliRun): number[] =>
  execFileSync('pgrep', ['-P', String(run.child.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);

it('backs off replacing a worker that keeps dying, then exits 1 at the third death', async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-workers-loop-'));
  await writeFile(
    join(dir, 'all.yaml'),
    'apiVersion: modelgateway.io/v1alpha1\nkind: ModelRoute\nmetadata: {name: chat}\nspec:\n  backends: [{name: demo, baseURL: "demo://"}]\n',
  );
  const [port, metricsPort] = [await freePort(), await freePort()];
  const run = (r = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort), '--workers', '2']));
  await run.waitForLog(isReady(1), 20_000);
  await run.waitForLog(isReady(2), 20_000);
  const [a, b] = children(run);

  process.kill(a!, 'SIGKILL');
  expect((await run.waitForLog((l) => died(1)(l) || died(2)(l))).delayMs).toBe(1_000);
  await run.waitForLog(isReady(3), 20_000);
  const [c] = children(run).filter((p) => p !== b);
  process.kill(c!, 'SIGKILL'); // the same slot, dead young again: twice the delay
  expect((await run.waitForLog(died(3))).delayMs).toBe(2_000);
  await run.waitForLog(isReady(4), 20_000);

  process.kill(b!, 'SIGKILL');
  const output = () => `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`;
  expect(await run.exited, output()).toBe(1);
  const giveUp = await run.waitForLog((l) => l.msg === 'workers keep dying; giving up');
  expect(giveUp.deaths).toBe(3);
  expect(run.stdout(), output()).not.toContain('"worker":5,'); // no fifth worker was forked
  expect(run.stdout().match(/drained: every in-flight request finished/g), output()).toHaveLength(1); // worker 4 drained
  expect(await run.waitForLog((l) => l.msg === 'all workers stopped')).toMatchObject({ exitCode: 1 });
}, 30_000);
