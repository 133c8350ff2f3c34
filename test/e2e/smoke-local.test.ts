// Runs test/e2e/smoke.ts, unchanged, against the real gateway executable on loopback: the file source on a copy of
// the e2e fixtures stands in for the cluster, and fake-kubectl.ts edits that copy where kind.sh would call
// `kubectl patch` (the file source hot-reloads it). This proves the smoke test's own assertions hold against the
// gateway; the Kubernetes parts (image, chart, RBAC, watch) are exercised only by kind.sh on a machine with Docker.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mg-smoke-local-'));
let gateway: CliRun | undefined;

afterAll(async () => {
  if (gateway && gateway.child.exitCode === null) {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('test/e2e/smoke.ts against the gateway (file source + fake kubectl)', () => {
  it('passes every step, including the group change seen in /v1/models', { timeout: 90_000 }, async () => {
    copyFileSync(join(REPO_ROOT, 'test/e2e/manifests/smoke.yaml'), join(dir, 'smoke.yaml'));
    gateway = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
    const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
    await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');

    const smoke = spawn(process.execPath, ['--import', 'tsx', 'test/e2e/smoke.ts'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        MG_E2E_BASE_URL: `${listening.api as string}/v1`,
        KUBECTL: `${process.execPath} test/e2e/fake-kubectl.ts`,
        MG_FAKE_KUBECTL_DIR: dir,
        MG_E2E_PROPAGATION_TIMEOUT_MS: '20000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    smoke.stdout.on('data', (d) => (out += d));
    smoke.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => smoke.on('close', resolve));
    expect(out, out).toContain('smoke: all 8 steps passed');
    expect(out.match(/^ok - /gm)?.length).toBe(8);
    expect(code).toBe(0);
    // The fake kubectl really changed the manifest, and changed it back.
    expect(readFileSync(join(dir, 'smoke.yaml'), 'utf8')).toMatch(/group: e2e-basic/);
  });
});
