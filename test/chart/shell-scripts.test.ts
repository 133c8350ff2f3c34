// Every shell script in the repository passes `bash -n` and shellcheck (Debian's shellcheck; .ci/run installs it).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listFiles, read, ROOT } from './repo.js';

/** *.sh files, plus extension-less scripts whose first line names bash or sh (like .ci/run). */
const scripts = listFiles().filter((f) => {
  if (f.endsWith('.sh')) return true;
  if (/\.[a-z0-9]+$/i.test(f.split('/').at(-1)!)) return false;
  return /^#!\s*\/(usr\/)?bin\/(env\s+)?(ba)?sh\b/.test(read(f).split('\n', 1)[0]!);
});

describe('shell scripts', () => {
  it('finds the scripts (the e2e driver and CI entry point at least)', () => {
    expect(scripts).toEqual(expect.arrayContaining(['test/e2e/kind.sh', '.ci/run']));
  });

  it('shellcheck is installed (apt-get install -y shellcheck; .ci/run does it)', () => {
    const r = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' });
    expect(r.error, 'shellcheck not found on PATH').toBeUndefined();
    expect(r.status).toBe(0);
  });

  it.each(scripts)('%s: bash -n and shellcheck are clean', (file) => {
    const path = join(ROOT, file);
    const syntax = spawnSync('bash', ['-n', path], { encoding: 'utf8' });
    expect(syntax.stderr).toBe('');
    expect(syntax.status).toBe(0);
    const lint = spawnSync('shellcheck', ['--external-sources', '--severity=style', path], {
      encoding: 'utf8',
      cwd: ROOT,
    });
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
  });

  it.each(scripts.filter((f) => f.startsWith('test/e2e/')))('%s: strict mode (set -euo pipefail)', (file) => {
    expect(read(file)).toMatch(/^set -euo pipefail$/m);
  });
});
