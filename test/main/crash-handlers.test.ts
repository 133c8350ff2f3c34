// The last-resort handlers of `serve`: an exception no handler caught is logged at fatal, what is in flight is
// drained, and the process exits 1 so the orchestrator restarts it (instead of dying mid-stream, unlogged).
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliEntry } from '../support/spawn-cli.js';

const fixture = fileURLToPath(new URL('./fixtures/crash.ts', import.meta.url));

describe('crash handlers', () => {
  for (const kind of ['exception', 'rejection'] as const) {
    it(`on an uncaught ${kind}: logs fatal, drains, exits 1`, () => {
      const dist = pathToFileURL(dirname(cliEntry())).href;
      const r = spawnSync(process.execPath, [fixture, kind, dist], { encoding: 'utf8', timeout: 15_000 });
      expect(r.status).toBe(1);
      expect(r.stdout).toContain('DRAINED');
      const fatal = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; origin: string; error: { message: string } })
        .find((l) => l.level === 60);
      expect(fatal).toMatchObject({
        origin: kind === 'exception' ? 'uncaughtException' : 'unhandledRejection',
        error: { message: `boom-${kind}` },
      });
    });
  }
});
