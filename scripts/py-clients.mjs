// The Python clients the test suite drives the gateway with (test/clients/requirements.txt), in a virtualenv under
// .cache/py-clients: created when missing, reinstalled when the requirements change (a hash stamp), so `npm test`
// works on a fresh machine with python3 and its venv module (Debian: python3-venv, which .ci/run installs).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const requirements = join(root, 'test/clients/requirements.txt');
export const VENV = join(root, '.cache/py-clients');
export const PYTHON = join(VENV, 'bin/python');

export function ensurePythonClients() {
  const stamp = join(VENV, 'requirements.sha256');
  const want = createHash('sha256').update(readFileSync(requirements)).digest('hex');
  if (existsSync(PYTHON) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return true;
  console.log('setting up the Python test clients in .cache/py-clients …');
  rmSync(VENV, { recursive: true, force: true });
  const steps = [
    ['python3', ['-m', 'venv', VENV]],
    [join(VENV, 'bin/pip'), ['install', '--quiet', '--disable-pip-version-check', '--retries', '1', '-r', requirements]],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) {
      // The tests that need the clients then fail (they do not skip): say why here.
      console.log(`could not set up the Python test clients (${cmd} ${args.join(' ')} failed)`);
      return false;
    }
  }
  writeFileSync(stamp, want);
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(ensurePythonClients() ? 0 : 1);
