// The whole gateway (startGateway: HTTP API, pipeline, status writer, leader election) fed by the Kubernetes
// source from the fake API server, exercised with the official openai SDK against a fake upstream: what a
// platform team's `kubectl apply` does to HTTP clients.
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/model/digest.js';
import { startGateway, type GatewayHandle } from '../../src/gateway/main.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { eventually, waitUntil } from '../support/wait.js';
import { fakeClusterSource } from '../fake-apiserver/gateway-source.js';
import { FakeApiServer } from '../fake-apiserver/server.js';
import type { KubeObj } from '../fake-apiserver/store.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { captureLogs } from '../support/log-capture.js';

const NS = 'ai';
const GV = 'modelgateway.io/v1alpha1';
const LABELS = { 'modelgateway.io/secret': 'true' };

let api: FakeApiServer;
let upstream: RecordingUpstream;
let gw: GatewayHandle | undefined;
let logs: ReturnType<typeof captureLogs>;

const secret = (name: string, data: Record<string, string>): KubeObj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NS, labels: LABELS },
  stringData: data,
});
const route = (name: string, upstreamModel = `${name}-upstream`): KubeObj => ({
  apiVersion: GV,
  kind: 'ModelRoute',
  metadata: { name, namespace: NS },
  spec: {
    model: name,
    backends: [{ name: 'primary', baseURL: upstream.baseURL, apiKeySecretRef: { name: 'upstream-key', key: 'apiKey' }, model: upstreamModel }],
  },
});
const group = (name: string, models: string[]): KubeObj => ({ apiVersion: GV, kind: 'Group', metadata: { name, namespace: NS }, spec: { models } });
const token = (name: string, spec: Record<string, unknown>): KubeObj => ({ apiVersion: GV, kind: 'GatewayToken', metadata: { name, namespace: NS }, spec });

beforeEach(async () => {
  api = new FakeApiServer();
  await api.start();
  upstream = await startRecordingUpstream();
  for (const o of [
    secret('upstream-key', { apiKey: 'sk-upstream-1' }),
    secret('alice-key', { token: 'sk-alice-1' }),
    route('chat-model'),
    route('embed-model'),
    group('team-a', ['chat-model']),
    group('team-b', ['embed-model']),
    token('alice', { group: 'team-a', secretRef: { name: 'alice-key', key: 'token' } }),
    token('bob', { group: 'team-b', sha256: sha256Hex('sk-bob') }),
  ])
    api.apply(o);
});

afterEach(async () => {
  await gw?.close({ timeoutMs: 0 });
  gw = undefined;
  await upstream.close();
  await api.stop();
});

async function start(usageIntervalMs?: number): Promise<GatewayHandle> {
  gw = await startGateway({
    source: fakeClusterSource(api.url, NS, 'gateway-0', {
      ...(usageIntervalMs !== undefined ? { usageIntervalMs } : {}),
      debounceMs: 10,
      backoff: { initialMs: 20, maxMs: 200 },
      election: { leaseDurationMs: 1200, renewDeadlineMs: 800, retryPeriodMs: 100 },
    }),
    host: '127.0.0.1',
    port: 0,
    metricsPort: 0,
    demo: false,
    logger: (logs = captureLogs()).logger,
    metrics: createMetrics({ defaultMetrics: false }),
  });
  return gw;
}

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw!.apiURL}/v1`, maxRetries: 0 });
const models = async (apiKey: string) => (await client(apiKey).models.list()).data.map((m) => m.id).sort();
const chat = (apiKey: string, model: string) => client(apiKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
const statusOf = async (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status?: number }) => e.status,
  );
describe('gateway with --source kubernetes', () => {
  it('is not ready until the initial sync completes, then serves what the cluster says', async () => {
    api.failRequests({ resource: 'gatewaytokens', verb: 'list' }, 500, Infinity);
    const h = await start();
    await waitUntil(() => api.requests.filter((r) => r.resource === 'gatewaytokens' && r.verb === 'list').length >= 2);
    expect((await fetch(`${h.apiURL}/readyz`)).status).toBe(503);
    api.clearFailures();
    await h.ready;
    expect((await fetch(`${h.apiURL}/readyz`)).status).toBe(200);
    expect(await models('sk-alice-1')).toEqual(['chat-model']);
    expect(await models('sk-bob')).toEqual(['embed-model']);
    const res = await chat('sk-alice-1', 'chat-model');
    expect(res.model).toBe('chat-model-upstream');
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream-1');
    // Neither client nor upstream keys from the Secrets ever reach the logs.
    expect(logs.text()).not.toMatch(/sk-alice-1|sk-upstream-1/);
  });

  it('ModelRoute create, update and delete take effect for clients', async () => {
    await (await start()).ready;
    api.apply(route('new-model'));
    api.patch('Group', NS, 'team-a', { spec: { models: ['chat-model', 'new-model'] } });
    await eventually(async () => expect(await models('sk-alice-1')).toEqual(['chat-model', 'new-model']));
    expect((await chat('sk-alice-1', 'new-model')).model).toBe('new-model-upstream');
    api.apply(route('new-model', 'renamed-upstream'));
    await eventually(async () => expect((await chat('sk-alice-1', 'new-model')).model).toBe('renamed-upstream'));
    api.remove('ModelRoute', NS, 'new-model');
    await eventually(async () => expect(await statusOf(chat('sk-alice-1', 'new-model'))).toBe(404));
    expect(await models('sk-alice-1')).toEqual(['chat-model']);
  });

  it('Group create, update and delete take effect for clients', async () => {
    await (await start()).ready;
    expect(await statusOf(chat('sk-alice-1', 'embed-model'))).toBe(403);
    api.patch('Group', NS, 'team-a', { spec: { models: ['*'] } });
    await eventually(async () => expect(await models('sk-alice-1')).toEqual(['chat-model', 'embed-model']));
    expect(await statusOf(chat('sk-alice-1', 'embed-model'))).toBe(200);
    api.apply(group('team-c', ['embed-model']));
    api.patch('GatewayToken', NS, 'alice', { spec: { group: 'team-c' } });
    await eventually(async () => expect(await models('sk-alice-1')).toEqual(['embed-model']));
    api.remove('Group', NS, 'team-c');
    // A token whose group is gone no longer authenticates.
    await eventually(async () => expect(await statusOf(client('sk-alice-1').models.list())).toBe(401));
  });

  it('GatewayToken create, update and delete take effect for clients', async () => {
    await (await start()).ready;
    expect(await statusOf(client('sk-carol').models.list())).toBe(401);
    api.apply(token('carol', { group: 'team-a', sha256: sha256Hex('sk-carol') }));
    await eventually(async () => expect(await models('sk-carol')).toEqual(['chat-model']));
    api.patch('GatewayToken', NS, 'carol', { spec: { disabled: true } });
    await eventually(async () => expect(await statusOf(client('sk-carol').models.list())).toBe(401));
    api.patch('GatewayToken', NS, 'carol', { spec: { disabled: false } });
    await eventually(async () => expect(await models('sk-carol')).toEqual(['chat-model']));
    api.remove('GatewayToken', NS, 'carol');
    await eventually(async () => expect(await statusOf(client('sk-carol').models.list())).toBe(401));
  });

  it('Secret rotation takes effect: client keys and upstream keys', async () => {
    await (await start()).ready;
    api.apply(secret('alice-key', { token: 'sk-alice-2' }));
    await eventually(async () => expect(await models('sk-alice-2')).toEqual(['chat-model']));
    expect(await statusOf(client('sk-alice-1').models.list())).toBe(401);
    api.apply(secret('upstream-key', { apiKey: 'sk-upstream-2' }));
    await eventually(async () => {
      await chat('sk-alice-2', 'chat-model');
      expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream-2');
    });
  });

  it("a token's group change (kubectl patch) changes /v1/models at once", async () => {
    await (await start()).ready;
    expect(await models('sk-bob')).toEqual(['embed-model']);
    const t0 = Date.now();
    api.patch('GatewayToken', NS, 'bob', { spec: { group: 'team-a' } });
    await eventually(async () => expect(await models('sk-bob')).toEqual(['chat-model']), 1000);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await statusOf(chat('sk-bob', 'embed-model'))).toBe(403);
  });

  it('keeps serving while the API server is down, and catches up when it returns', async () => {
    const h = await start();
    await h.ready;
    api.setUnreachable(true);
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 3; i++) {
      expect(await models('sk-alice-1')).toEqual(['chat-model']);
      expect((await chat('sk-alice-1', 'chat-model')).model).toBe('chat-model-upstream');
      expect((await fetch(`${h.apiURL}/readyz`)).status).toBe(200);
    }
    api.patch('Group', NS, 'team-a', { spec: { models: ['chat-model', 'embed-model'] } });
    api.setUnreachable(false);
    await eventually(async () => expect(await models('sk-alice-1')).toEqual(['chat-model', 'embed-model']), 5000);
  });

  it('410 Gone → relist without losing objects: clients see no gap', async () => {
    await (await start()).ready;
    await waitUntil(() => api.openWatches === 4);
    let stop = false;
    const failures: string[] = [];
    // Clients keep calling throughout; every answer must be the full, correct list.
    const load = (async () => {
      while (!stop) {
        const got = await models('sk-alice-1').catch((e: Error) => [e.message]);
        if (got.join() !== 'chat-model' && got.join() !== 'chat-model,embed-model') failures.push(got.join());
      }
    })();
    api.store.compact();
    api.sendWatchError(410);
    api.patch('Group', NS, 'team-a', { spec: { models: ['chat-model', 'embed-model'] } });
    await eventually(async () => expect(await models('sk-alice-1')).toEqual(['chat-model', 'embed-model']));
    await waitUntil(() => api.recorded('list').length >= 8); // every reflector relisted
    stop = true;
    await load;
    expect(failures).toEqual([]);
  });

  it('writes status conditions as leader and serves metrics about it', async () => {
    const h = await start();
    await h.ready;
    api.apply(token('broken', { group: 'team-a', secretRef: { name: 'no-such-secret', key: 'token' } }));
    await waitUntil(() => {
      const c = (api.get('GatewayToken', NS, 'broken')?.status as { conditions?: { type: string; reason: string }[] } | undefined)?.conditions;
      return c?.find((x) => x.type === 'ResolvedRefs')?.reason === 'SecretNotFound';
    });
    const ready = (kind: 'ModelRoute' | 'GatewayToken', name: string) =>
      (api.get(kind, NS, name)?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready')?.status;
    expect(ready('ModelRoute', 'chat-model')).toBe('True');
    expect(ready('GatewayToken', 'alice')).toBe('True');
    const text = await (await fetch(`${h.metricsURL}/metrics`)).text();
    expect(text).toMatch(/^model_gateway_leader 1$/m);
    expect(text).toMatch(/^model_gateway_status_writes_total\{result="written"\} \d+$/m);
    // Stopping the gateway releases the Lease for the next replica.
    await h.close({ timeoutMs: 0 });
    expect((api.get('Lease', NS, 'model-gateway')?.spec as { holderIdentity?: string } | undefined)?.holderIdentity).toBe('');
  });

  it('shows a backend whose credential cannot be obtained on its route (CredentialsAvailable=False), and clears it once it can', async () => {
    // Hermetic AWS chain: no keys in the environment, no files, no instance metadata.
    const AWS = [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_CONFIG_FILE',
      'AWS_SHARED_CREDENTIALS_FILE',
      'AWS_EC2_METADATA_DISABLED',
    ];
    const saved = Object.fromEntries(AWS.map((k) => [k, process.env[k]]));
    for (const k of AWS) delete process.env[k];
    Object.assign(process.env, { AWS_CONFIG_FILE: '/nonexistent/c', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/s', AWS_EC2_METADATA_DISABLED: 'true' });
    try {
      const h = await start();
      await h.ready;
      const bedrock = (auth: Record<string, unknown>): KubeObj => ({
        apiVersion: GV,
        kind: 'ModelRoute',
        metadata: { name: 'bedrock', namespace: NS },
        spec: { model: 'bedrock', backends: [{ name: 'east', baseURL: upstream.baseURL, auth: { awsSigV4: { region: 'us-east-1', ...auth } } }] },
      });
      api.apply(bedrock({}));
      type Cond = { type: string; status: string; reason: string; message: string };
      const credentials = () =>
        (api.get('ModelRoute', NS, 'bedrock')?.status as { conditions?: Cond[] } | undefined)?.conditions?.find((c) => c.type === 'CredentialsAvailable');
      const down = await waitUntil(credentials, 10_000, 'the CredentialsAvailable condition');
      expect(down).toMatchObject({ status: 'False', reason: 'CredentialsUnavailable' });
      expect(down.message).toMatch(/^backend "east": .*credentials/i);
      // Keys in a Secret: the credential is had, and the condition goes away.
      api.apply(secret('aws', { AWS_ACCESS_KEY_ID: 'AKIAK8SEXAMPLE000001', AWS_SECRET_ACCESS_KEY: 'k8s/secret/0123456789abcdefghijklmnopqrs' }));
      api.apply(bedrock({ secretRef: { name: 'aws' } }));
      await waitUntil(() => credentials() === undefined && api.get('ModelRoute', NS, 'bedrock') !== undefined, 10_000, 'the condition to clear');
      const status = JSON.stringify(api.get('ModelRoute', NS, 'bedrock')?.status);
      expect(status).toContain('"Ready"');
      expect(status).not.toContain('k8s/secret/0123456789');
    } finally {
      for (const k of AWS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it('writes the usage of limits to status.usage of Groups and GatewayTokens, once per object per round, conditions untouched', async () => {
    api.patch('GatewayToken', NS, 'alice', { spec: { limits: { tokensPerDay: 100_000, concurrentRequests: 5 } } });
    api.patch('Group', NS, 'team-a', { spec: { limits: { tokensPerMonth: 1_000_000 } } });
    const h = await start(100);
    await h.ready;
    for (let i = 0; i < 3; i++) await chat('sk-alice-1', 'chat-model'); // the fake upstream reports 11 + 7 tokens each
    type Usage = Record<string, { used: number; limit: number } | string>;
    const usageOf = (kind: 'Group' | 'GatewayToken', name: string) => (api.get(kind, NS, name)?.status as { usage?: Usage } | undefined)?.usage;
    await waitUntil(() => (usageOf('GatewayToken', 'alice')?.['tokensPerDay'] as { used: number } | undefined)?.used === 54, 5_000, "alice's status.usage");
    expect(usageOf('GatewayToken', 'alice')).toMatchObject({ tokensPerDay: { used: 54, limit: 100_000 }, concurrentRequests: { used: 0, limit: 5 } });
    expect(usageOf('GatewayToken', 'alice')?.['updatedAt']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await waitUntil(() => (usageOf('Group', 'team-a')?.['tokensPerMonth'] as { used: number } | undefined)?.used === 54, 5_000, "team-a's status.usage");
    // Objects without limits get no usage; the conditions the status writer owns are still there.
    expect(usageOf('GatewayToken', 'bob')).toBeUndefined();
    const conditions = (api.get('GatewayToken', NS, 'alice')?.status as { conditions?: unknown[] } | undefined)?.conditions ?? [];
    expect(conditions.length).toBeGreaterThan(0);
    // Unchanged counts are not written again, however many rounds pass.
    const writes = () => api.recorded('patch').filter((r) => r.subresource === 'status' && r.name === 'alice').length;
    const before = writes();
    expect(before).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 500)); // five rounds: the thing under test is that nothing happens
    expect(writes()).toBe(before);
  });
});
