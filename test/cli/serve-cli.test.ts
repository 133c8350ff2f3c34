// `model-gateway serve` through the real executable: help, version, one-line errors, env vars, SIGTERM.
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVE_OPTIONS } from '../../src/cli/serve-options.js';
import { waitUntil } from '../support/wait.js';
import { freePort } from '../support/free-port.js';
import { REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';

const running: CliRun[] = [];
afterEach(() => {
  for (const r of running.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});
const run = (args: string[], env: Record<string, string> = {}) => {
  const r = runCli(args, env);
  running.push(r);
  return r;
};

describe('model-gateway serve (executable)', () => {
  it('--help lists every flag with its environment variable and default, and exits 0', async () => {
    const r = run(['serve', '--help']);
    expect(await r.exited).toBe(0);
    for (const o of SERVE_OPTIONS) {
      const line = r
        .stdout()
        .split('\n')
        .find((l) => l.startsWith(`  --${o.flag} `) || l.startsWith(`  --[no-]${o.flag} `));
      expect(line, `--${o.flag}`).toBeDefined();
      expect(line).toContain(o.env);
    }
    const bare = run(['--help']); // serve is the default command
    expect(await bare.exited).toBe(0);
    expect(bare.stdout()).toBe(r.stdout());
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as { version: string };
    const r = run(['--version']);
    expect(await r.exited).toBe(0);
    expect(r.stdout()).toBe(`${version}\n`);
  });

  it('fails fast on a bad flag value with one line and exit code 2', async () => {
    const started = Date.now();
    const r = run(['serve', '--port', '99999']);
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toBe('model-gateway: --port must be an integer from 0 to 65535 (got "99999")\n');
    expect(r.stdout()).toBe('');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('names the environment variable when its value is bad', async () => {
    const r = run(['serve'], { MG_DRAIN_TIMEOUT: 'forever' });
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toMatch(/^model-gateway: MG_DRAIN_TIMEOUT \(--drain-timeout\) must be a duration[^\n]*\n$/);
  });

  it('says in one line when --source kubernetes has no usable kubeconfig', async () => {
    const r = run(['serve', '--source', 'kubernetes', '--namespaces', 'ai', '--kubeconfig', 'no/such/kubeconfig']);
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toMatch(/^model-gateway: --source kubernetes: ENOENT[^\n]*no\/such\/kubeconfig[^\n]*\n$/);
  });

  it('exits 1 with one line when the config directory does not exist', async () => {
    const r = run(['serve', '--config', 'no/such/dir', '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toBe('model-gateway: config directory no/such/dir does not exist or is not a directory\n');
  });

  it('exits 1 with one line when the port is taken', async () => {
    const port = await freePort();
    const first = run(['serve', '--config', 'examples/local', '--host', '127.0.0.1', '--port', String(port), '--metrics-port', '0']);
    await first.waitForLog((l) => l.msg === 'model-gateway listening');
    const second = run(['serve', '--config', 'examples/local', '--host', '127.0.0.1', '--port', String(port), '--metrics-port', '0']);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toBe(`model-gateway: cannot listen on 127.0.0.1:${port}: EADDRINUSE\n`);
  });

  it('starts with a file whose document has an alias typo, serves the other files, and still reloads them', async () => {
    // Regression (issue 12, item 5): `apiKey: *oops` threw out of the YAML reader, so serve exited 1 at start.
    const dir = await mkdtemp(join(tmpdir(), 'mg-serve-alias-'));
    try {
      await cp(`${REPO_ROOT}/examples/local`, dir, { recursive: true });
      await writeFile(join(dir, 'typo.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata: {name: typo}\nstringData:\n  apiKey: *oops\n');
      const r = run(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
      const listening = await r.waitForLog((l) => l.msg === 'model-gateway listening');
      await r.waitForLog((l) => l.msg === 'first config loaded; ready');
      expect(await r.waitForLog((l) => l.level === 50 && String(l.msg).startsWith('cannot parse'))).toMatchObject({
        line: 5,
        error: 'Unresolved alias (the anchor must be set before the alias)',
      });
      const models = async () => {
        const res = await fetch(`${String(listening.api)}/v1/models`, { headers: { authorization: 'Bearer mg-demo-key' } });
        return ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
      };
      expect(await models()).toContain('demo-chat');
      const groups = join(dir, 'access', 'groups.yaml');
      await writeFile(groups, (await readFile(groups, 'utf8')).replace(/models: \[[^\]]*\]/, 'models: ["demo-chat", "demo-embed"]'));
      await waitUntil(async () => (await models()).sort().join() === 'demo-chat,demo-embed', 5_000, 'the groups file reloaded');
      r.child.kill('SIGTERM');
      expect(await r.exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('honours MG_* variables, becomes ready, and exits 0 on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const r = run([], {
      MG_CONFIG_DIR: 'examples/local',
      MG_HOST: '127.0.0.1',
      MG_PORT: String(port),
      MG_METRICS_PORT: String(metricsPort),
      MG_LOG_LEVEL: 'debug',
    });
    const listening = await r.waitForLog((l) => l.msg === 'model-gateway listening');
    expect(listening.api).toBe(`http://127.0.0.1:${port}`);
    expect(listening.metrics).toBe(`http://127.0.0.1:${metricsPort}/metrics`);
    await r.waitForLog((l) => l.msg === 'first config loaded; ready');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(r.stdout()).toContain('drained: every in-flight request finished');
    expect(r.stderr()).toBe('');
  });
});

describe('model-gateway serve --workers (executable)', () => {
  it('runs N workers on one API port, aggregates their metrics on the metrics port, and drains all on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const r = run([
      'serve',
      '--config',
      'examples/local',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--metrics-port',
      String(metricsPort),
      '--workers',
      '2',
    ]);
    // Every wait fails on its own, naming its step, well within the test's timeout.
    await r.waitForLog((l) => l.msg === 'started workers' && l.workers === 2, 10_000);
    await Promise.all([1, 2].map((n) => r.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === n, 20_000)));
    const get = (url: string) => fetch(url, { signal: AbortSignal.timeout(2_000) });
    for (let i = 0; i < 4; i++) expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const text = await (await get(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(text).toMatch(/^model_gateway_config_reloads_total 2$/m); // summed over both workers
    expect(text).toMatch(/^model_gateway_config_version 1$/m); // a max, not a sum
    r.child.kill('SIGTERM');
    expect(await r.waitForExit(10_000)).toBe(0);
    expect(r.stdout().match(/drained: every in-flight request finished/g)).toHaveLength(2);
    await expect(get(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow('fetch failed'); // refused, not timed out
  }, 60_000);

  it('exits 1 when the workers cannot start', async () => {
    const r = run(['serve', '--config', 'no/such/dir', '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--workers', '2']);
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toBe('model-gateway: config directory no/such/dir does not exist or is not a directory\n');
  }, 45_000);
});
