// Vitest global setup: a directory for the API servers that envtest files share (sharedEnvtest() in envtest.ts
// starts them when none is free), and their stop when the run ends. A run without envtest files starts none.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopServersUnder } from './server-process.js';

export default function setup(project: TestProject): () => void {
  const runDir = mkdtempSync(join(tmpdir(), 'mg-envtest-run-'));
  project.provide('envtestRunDir', runDir);
  return () => stopServersUnder(runDir);
}
