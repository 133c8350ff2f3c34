// Secret hygiene, end to end: the real executable configured with recognisable secrets (client keys, the upstream
// key, the id-sealing key, Secret files with typos that quote their value, Kubernetes Secrets), driven through the
// ways a secret could escape (wrong and misplaced keys, upstreams that echo the credential they received in a body,
// a header or an SSE event, broken Secret files on reload, the metrics port, `check`, status written to the API
// server). Nothing it lets out may carry any of them, whole or in part (see canary.ts).
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfigYaml } from '../fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../fake-apiserver/server.js';
import { freePort, REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';
import { waitUntil } from '../config/wait-until.js';
import { canary, expectNoLeaks, type Canary } from './canary.js';

const GV = 'modelgateway.io/v1alpha1';
const client = canary('client');
const upstreamKey = canary('upstream');
const otherKey = canary('unused'); // in a Secret no object references: still a secret
const typoKey = canary('typo'); // quoted by a YAML parser error (block scalar header)
const aliasKey = canary('alias'); // a YAML alias typo: the "alias" is the value
const idKey: Canary = { name: 'id-key', value: randomBytes(32).toString('hex') };
const CANARIES = [client, upstreamKey, otherKey, typoKey, aliasKey, idKey];

/** Everything an answer carries: status line, every header, the body. */
async function seen(r: Response): Promise<string> {
  return `${r.status}\n${[...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${await r.text()}`;
}

/** An upstream that quotes the Authorization it received back in every way it can. */
function echoingUpstream(): Server {
  return createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const auth = String(req.headers.authorization ?? '');
      if (req.url!.includes('/echo-401/')) {
        res.writeHead(401, { 'content-type': 'application/json', 'x-received-authorization': auth, 'www-authenticate': `Bearer realm="${auth}"` });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${auth.slice(7)}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
      } else if (req.url!.includes('/echo-sse/')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = (content: string) =>
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
        res.write(event('you sent '));
        res.end(`${event(auth)}data: [DONE]\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }],
          }),
        );
      }
    });
  });
}

let upstream: Server;
let upstreamURL: string;
beforeAll(async () => {
  upstream = echoingUpstream();
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

function routes(namespace = 'default'): object[] {
  const backend = (name: string, path: string) => ({ name, baseURL: `${upstreamURL}${path}/v1`, apiKeySecretRef: { name: 'keys', key: 'upstream' } });
  return [
    { apiVersion: GV, kind: 'ModelRoute', metadata: { name: 'plain', namespace }, spec: { backends: [backend('up', '')] } },
    { apiVersion: GV, kind: 'ModelRoute', metadata: { name: 'echo-401', namespace }, spec: { backends: [backend('up', '/echo-401')] } },
    { apiVersion: GV, kind: 'ModelRoute', metadata: { name: 'echo-sse', namespace }, spec: { backends: [backend('up', '/echo-sse')] } },
    // Refers to a key the Secret lacks: its status message names the Secret and key, never a value.
    {
      apiVersion: GV,
      kind: 'ModelRoute',
      metadata: { name: 'missing-key', namespace },
      spec: { backends: [{ name: 'up', baseURL: `${upstreamURL}/v1`, apiKeySecretRef: { name: 'keys', key: 'nope' } }] },
    },
    { apiVersion: GV, kind: 'Group', metadata: { name: 'all', namespace }, spec: { models: ['*'] } },
    { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'alice', namespace }, spec: { group: 'all', secretRef: { name: 'keys', key: 'client' } } },
    // Two tokens with the same key: a Conflict whose message must not quote the key.
    { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'alice-twin', namespace }, spec: { group: 'all', secretRef: { name: 'keys', key: 'client' } } },
  ];
}
const keysSecret = (namespace = 'default', labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'keys', namespace, labels },
  stringData: { client: client.value, upstream: upstreamKey.value, other: otherKey.value },
});

/** Drives every way a key could come back out through the API port; returns what the clients saw. */
async function drive(api: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const post = (body: object, headers: Record<string, string>, path = '/v1/chat/completions') =>
    fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
  const bearer = { authorization: `Bearer ${client.value}` };
  out['ok'] = await seen(await post(chat('plain'), bearer));
  out['upstream 401 echoing the key'] = await seen(await post(chat('echo-401'), bearer));
  out['SSE event echoing the key'] = await seen(await post(chat('echo-sse', true), bearer));
  out['a key one character off'] = await seen(await post(chat('plain'), { authorization: `Bearer ${client.value.slice(0, -1)}x` }));
  out['the key with a suffix'] = await seen(await post(chat('plain'), { authorization: `Bearer ${client.value} extra` }));
  out['the upstream key as a client key'] = await seen(await post(chat('plain'), { authorization: `Bearer ${upstreamKey.value}` }));
  out['the key in the query string'] = await seen(await post(chat('plain'), {}, `/v1/chat/completions?api_key=${client.value}`));
  out['the key as x-api-key'] = await seen(await post(chat('plain'), { 'x-api-key': client.value }));
  // Not covered on purpose: a key a client pastes into a plain field (the model name, a URL path) is ordinary text
  // to the gateway; it is quoted back to that client in the 404 and the path is in the access log
  // (docs/hardening.md says so).
  // The SDK's view of the echoing upstream: its error message is what applications log.
  const sdk = new OpenAI({ baseURL: `${api}/v1`, apiKey: client.value, maxRetries: 0 });
  const failure = await sdk.chat.completions.create(chat('echo-401') as never).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
  out['the SDK error'] = `${failure!.message} ${JSON.stringify((failure as InstanceType<typeof OpenAI.APIError>).error)}`;
  // The echo reached the gateway (else the test proves nothing): the client got the masked form.
  expect(out['upstream 401 echoing the key']).toContain('*'.repeat(upstreamKey.value.length));
  expect(out['SSE event echoing the key']).toContain('*'.repeat(upstreamKey.value.length));
  return out;
}

describe('secret hygiene: the file source', () => {
  let dir: string;
  let cli: CliRun;
  let api: string;
  let metrics: string;
  const files: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-canary-'));
    const { stringify } = await import('yaml');
    writeFileSync(join(dir, 'config.yaml'), [keysSecret(), ...routes()].map((o) => stringify(o)).join('---\n'));
    const [port, metricsPort] = [await freePort(), await freePort()];
    cli = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort), '--log-level', 'debug'], {
      MG_ID_KEYS: idKey.value,
    });
    await cli.waitForLog((l) => l.msg === 'first config loaded; ready', 20_000);
    api = `http://127.0.0.1:${port}`;
    metrics = `http://127.0.0.1:${metricsPort}/metrics`;
  }, 30_000);

  afterAll(async () => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('no canary in answers, logs, metrics or check output, through bad keys, echoing upstreams and broken Secret files', async () => {
    const answers = await drive(api);
    // Secret files that do not parse, with the error's line quoting the value: logged on reload, reported by check.
    files['typo.yaml'] = `apiVersion: v1\nkind: Secret\nmetadata: {name: typo}\nstringData:\n  apiKey: >${typoKey.value}\n`;
    files['alias.yaml'] = `apiVersion: v1\nkind: Secret\nmetadata: {name: alias}\nstringData:\n  apiKey: *${aliasKey.value}\n`;
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    await waitUntil(() => ['typo.yaml', 'alias.yaml'].every((f) => cli.stdout().includes(f)), 10_000);
    // Requests after the reload, with the key again.
    Object.assign(answers, Object.fromEntries(Object.entries(await drive(api)).map(([k, v]) => [`after reload: ${k}`, v])));
    const scraped = await (await fetch(metrics)).text();
    expect(scraped).toContain('model_gateway_requests_total');
    const check = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'check', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    const checkJson = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'check', '--output', 'json', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toContain('typo.yaml'); // check did read the broken files
    expect(JSON.parse(checkJson.stdout).errors.length).toBeGreaterThanOrEqual(2);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.stdout().split('\n').length).toBeGreaterThan(20); // debug logging was on: there was plenty to leak into
    expectNoLeaks(
      {
        ...answers,
        'log (stdout)': cli.stdout(),
        'log (stderr)': cli.stderr(),
        '/metrics': scraped,
        check: check.stdout + check.stderr,
        'check --output json': checkJson.stdout + checkJson.stderr,
      },
      CANARIES,
    );
  }, 60_000);
});

describe('secret hygiene: the Kubernetes source', () => {
  it('no canary in status patches, other API requests, logs or answers', async () => {
    const kube = new FakeApiServer();
    await kube.start();
    const dir = mkdtempSync(join(tmpdir(), 'mg-canary-kube-'));
    let cli: CliRun | undefined;
    try {
      const ns = 'team';
      kube.apply(keysSecret(ns, { 'modelgateway.io/secret': 'true' }) as never);
      for (const o of routes(ns)) kube.apply(o as never);
      writeFileSync(join(dir, 'config'), kubeConfigYaml(kube.url, ns));
      const [port, metricsPort] = [await freePort(), await freePort()];
      cli = runCli(
        [
          'serve',
          '--source',
          'kubernetes',
          '--namespaces',
          ns,
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--metrics-port',
          String(metricsPort),
          '--log-level',
          'debug',
        ],
        {
          KUBECONFIG: join(dir, 'config'),
          POD_NAME: 'gateway-0',
          MG_ID_KEYS: idKey.value,
        },
      );
      await cli.waitForLog((l) => l.msg === 'first config loaded; ready', 20_000);
      const answers = await drive(`http://127.0.0.1:${port}`);
      // Status is written for every object, including the ones whose refs or keys are wrong.
      await waitUntil(() => kube.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status').length >= routes(ns).length, 15_000);
      const patches = kube.requests.filter((r) => r.body !== undefined).map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body)}`);
      expect(patches.join('\n')).toMatch(/Conflict|SecretKeyNotFound/); // the messages that talk about keys were written
      const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      expectNoLeaks(
        {
          ...answers,
          'API server writes': patches.join('\n'),
          'API server paths and queries': kube.requests.map((r) => `${r.path} ${JSON.stringify(r.query)}`).join('\n'),
          'log (stdout)': cli.stdout(),
          'log (stderr)': cli.stderr(),
          '/metrics': scraped,
        },
        CANARIES,
      );
    } finally {
      if (cli && cli.child.exitCode === null) cli.child.kill('SIGKILL');
      await kube.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the canary check itself', () => {
  it('finds a whole secret, a fragment of one, and not a masked one', async () => {
    const { leaksIn } = await import('./canary.js');
    const c = canary('self');
    expect(leaksIn(`x ${c.value} y`, [c])).toHaveLength(1);
    expect(leaksIn(`x ${c.value.slice(10, 24)} y`, [c])).toHaveLength(1);
    expect(leaksIn(`Bearer ${'*'.repeat(c.value.length)}`, [c])).toEqual([]);
    expect(leaksIn('sk-canary-self- and other text', [c])).toEqual([]);
  });
});
