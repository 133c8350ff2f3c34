// `model-gateway serve --source kubernetes` as the real executable, against the fake API server: flags and env
// reach the source, the process becomes ready, serves the cluster's config, and hands the Lease over on SIGTERM.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigYaml } from '../fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../fake-apiserver/server.js';
import type { KubeObj } from '../fake-apiserver/store.js';
import { freePort } from '../support/free-port.js';
import { runCli, type CliRun } from '../support/spawn-cli.js';

const GV = 'modelgateway.io/v1alpha1';
let api: FakeApiServer | undefined;
let cli: CliRun | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (cli && cli.child.exitCode === null) cli.child.kill('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  api = cli = dir = undefined;
});

describe('model-gateway serve --source kubernetes (executable)', () => {
  it('becomes ready from the API server, serves its config, and releases the Lease on SIGTERM', async () => {
    api = new FakeApiServer();
    await api.start();
    const objects: KubeObj[] = [
      { apiVersion: GV, kind: 'ModelRoute', metadata: { name: 'demo-chat', namespace: 'team' }, spec: { backends: [{ name: 'demo', baseURL: 'demo://' }] } },
      { apiVersion: GV, kind: 'Group', metadata: { name: 'g', namespace: 'team' }, spec: { models: ['*'] } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k', namespace: 'team', labels: { tier: 'gateway' } }, stringData: { token: 'sk-cli-key' } },
      { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 't', namespace: 'team' }, spec: { group: 'g', secretRef: { name: 'k', key: 'token' } } },
    ];
    for (const o of objects) api.apply(o);
    dir = mkdtempSync(join(tmpdir(), 'mg-cli-kube-'));
    writeFileSync(join(dir, 'config'), kubeConfigYaml(api.url, 'elsewhere'));
    const [port, metricsPort] = [await freePort(), await freePort()];
    cli = runCli(
      [
        'serve',
        '--source',
        'kubernetes',
        '--namespaces',
        'team',
        '--secret-selector',
        'tier=gateway',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--metrics-port',
        String(metricsPort),
      ],
      {
        KUBECONFIG: join(dir, 'config'),
        POD_NAME: 'gateway-abc',
        MG_LEASE_NAME: 'cli-lease',
      },
    );
    await cli.waitForLog((l) => l.msg === 'first config loaded; ready', 20_000);
    const client = new OpenAI({ apiKey: 'sk-cli-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['demo-chat']);
    const reply = await client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'hello' }] });
    expect(reply.choices[0]?.message.content).toBeTruthy();
    // The flags reached the source: only the watched namespace, only Secrets with the custom selector.
    expect(new Set(api.requests.filter((r) => r.resource !== 'leases').map((r) => r.namespace))).toEqual(new Set(['team']));
    expect(api.requests.filter((r) => r.resource === 'secrets').every((r) => r.labelSelector === 'tier=gateway')).toBe(true);
    // Leader election with POD_NAME as identity, in the watched namespace (no pod namespace outside a cluster).
    await cli.waitForLog((l) => l.msg === 'became leader', 10_000);
    expect((api.get('Lease', 'team', 'cli-lease')?.spec as { holderIdentity?: string } | undefined)?.holderIdentity).toBe('gateway-abc');
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect((api.get('Lease', 'team', 'cli-lease')?.spec as { holderIdentity?: string } | undefined)?.holderIdentity).toBe('');
  });
});
