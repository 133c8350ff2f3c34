// An API-server outage for tests: kill the envtest kube-apiserver (etcd keeps running, so no data is lost), and
// start it again later with the very arguments start.sh gave it (read from /proc before the kill), on the same
// port, its pid written back to DIR/apiserver.pid so that stop.sh still finds and stops it.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { waitUntil } from '../support/wait.js';
import type { Envtest } from './envtest.js';

/** Whether the process exists and is not a zombie (a killed server nobody has reaped yet counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

/** Kills the API server (SIGKILL) and returns a function that starts it again and resolves once /readyz passes. */
export async function killApiServer(server: Envtest): Promise<() => Promise<void>> {
  const dir = server.env.ENVTEST_DIR;
  const pidFile = join(dir, 'apiserver.pid');
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  if (!argv[0]?.includes('kube-apiserver') || !argv.some((a) => a.includes(`${dir}/`))) {
    throw new Error(`pid ${pid} in ${pidFile} is not this envtest's kube-apiserver`);
  }
  process.kill(pid, 'SIGKILL');
  await waitUntil(() => !alive(pid), 10_000, `kube-apiserver ${pid} to exit`);
  return async () => {
    const log = openSync(join(dir, 'apiserver.log'), 'a');
    // Its own session, as start.sh's setsid does: the server outlives nothing of the test but is stopped by stop.sh.
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', log, log] });
    closeSync(log);
    child.unref();
    if (child.pid === undefined) throw new Error('kube-apiserver did not start');
    writeFileSync(pidFile, `${child.pid}\n`);
    const dispatcher = new Agent({ connect: { ca: readFileSync(join(dir, 'ca.crt')) } });
    try {
      await waitUntil(
        async () => {
          if (!alive(child.pid!)) throw new Error(`the restarted kube-apiserver exited; see ${dir}/apiserver.log`);
          const r = await fetch(`${server.env.KUBE_APISERVER_URL}/readyz`, {
            dispatcher,
            headers: { authorization: `Bearer ${server.env.ENVTEST_ADMIN_TOKEN}` },
          }).catch(() => undefined);
          await r?.body?.cancel();
          return r?.status === 200;
        },
        60_000,
        'the restarted kube-apiserver to be ready',
      );
    } finally {
      await dispatcher.close();
    }
  };
}
