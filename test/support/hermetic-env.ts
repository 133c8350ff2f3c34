// Environment variables a test file owns: cleared before each of its tests, so nothing of the machine's leaks in,
// and put back as they were after it (files share worker processes: vitest.config.ts).
import { afterEach, beforeEach } from 'vitest';

export function hermeticEnv(keys: readonly string[]): void {
  const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  beforeEach(() => {
    for (const k of keys) delete process.env[k];
  });
  afterEach(() => {
    for (const k of keys) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
}
