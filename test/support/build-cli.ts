// Vitest global setup: builds the `model-gateway` executable once per run, with the same compiler and config as
// `npm run build` (tsc -p tsconfig.build.json), so tests spawn the built CLI instead of `node --import tsx
// src/cli.ts`, which compiled the whole source tree again in every process (1.5-2.5 s per spawn, ~0.1 s built).
// The typecheck is left to `npm test`'s own tsc step (--noCheck: the emitted JavaScript is the same).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built `cli.js`, to run with `node`. */
    cliEntry: string;
  }
}

export default function setup(project: TestProject): () => void {
  // Inside the repository (.cache/ is ignored by git), so the build resolves the repository's node_modules as
  // dist/ does; one directory per run, so two runs in one checkout do not overwrite each other's build.
  const parent = join(REPO_ROOT, '.cache', 'test-cli');
  mkdirSync(parent, { recursive: true });
  // Builds left by runs that were killed before their teardown.
  for (const old of readdirSync(parent)) {
    if (Date.now() - statSync(join(parent, old)).mtimeMs > 86_400_000) rmSync(join(parent, old), { recursive: true, force: true });
  }
  const root = mkdtempSync(join(parent, 'run-'));
  try {
    build(root);
  } catch (err) {
    rmSync(root, { recursive: true, force: true }); // no teardown runs when setup throws
    throw err;
  }
  // Watch mode: a rerun after a source change must not spawn the executable built before it.
  project.onTestsRerun(() => build(root));
  project.provide('cliEntry', join(root, 'dist', 'cli.js'));
  return () => rmSync(root, { recursive: true, force: true });
}

function build(root: string): void {
  // The package's bin (its exports do not include it), found from its package.json.
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  const out = join(root, 'dist');
  rmSync(out, { recursive: true, force: true }); // a deleted source file must not live on in the build
  const r = spawnSync(process.execPath, [tsc, '-p', join(REPO_ROOT, 'tsconfig.build.json'), '--noCheck', '--outDir', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building the CLI for the tests failed:\n${r.stdout}${r.stderr}`);
  // dist/cli/serve.js reads ../../package.json for --version, and the package's "type" makes dist/ ES modules.
  copyFileSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
}
