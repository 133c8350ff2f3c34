#!/usr/bin/env node
// Entry of `npm run bench` that works on a fresh clone: installs the npm dependencies when they are missing,
// then runs bench/run.ts through tsx, itself pinned to the load generator's CPU so the target's CPU stays free.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${root}/node_modules/tsx`) || !existsSync(`${root}/node_modules/autocannon`)) {
  console.error('[bench] installing npm dependencies (npm ci) …');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const args = ['--import', 'tsx', `${root}/bench/run.ts`, ...process.argv.slice(2)];
const pin = spawnSync('taskset', ['--version']).status === 0;
const r = pin
  ? spawnSync('taskset', ['-c', '0', process.execPath, ...args], { cwd: root, stdio: 'inherit' })
  : spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
