// Secret hygiene, end to end: the real executable (logging at its most verbose level) configured with recognisable
// secrets — client keys, the upstream key and the one it is rotated to, the id-sealing keys, Secret files with typos
// that quote their value, Kubernetes Secrets and the gateway's own API-server token — driven through the ways a
// secret could escape: wrong, partial and misplaced keys (query string, other headers, a second Authorization),
// upstreams that echo the credential they received in a 200, 403 or 500 body, a header or an SSE event, a failover
// past such an answer, broken Secret files and key rotation on reload, a broken id-key file, failing status writes,
// the metrics port, `check`, and every request sent to the API server. Nothing it lets out may carry any of them,
// whole or in part (see canary.ts).
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfigYaml } from '../fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../fake-apiserver/server.js';
import { freePort } from '../support/free-port.js';
import { cliEntry, REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';
import { waitUntil } from '../support/wait.js';
import { canary, everythingIn, expectNoLeaks, leaksIn, type Canary } from './canary.js';
import { rawRequest } from './support.js';

const GV = 'modelgateway.io/v1alpha1';
const client = canary('client');
const upstreamKey = canary('upstream');
const rotatedKey = canary('rotated'); // what the upstream key is rotated to on reload
const otherKey = canary('unused'); // in a Secret no object references: still a secret
const typoKey = canary('typo'); // quoted by a YAML parser error (block scalar header)
const aliasKey = canary('alias'); // a YAML alias typo: the "alias" is the value
const idKey: Canary = { name: 'id-key', value: randomBytes(32).toString('hex') };
const kubeToken = canary('kube-token'); // the gateway's own credential towards the API server
const CANARIES = [client, upstreamKey, rotatedKey, otherKey, typoKey, aliasKey, idKey, kubeToken];

/** An upstream that quotes the Authorization it received back in every way it can. */
function echoingUpstream(): Server {
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const completion = (content: string) =>
    JSON.stringify({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    });
  const apiError = (auth: string) =>
    JSON.stringify({ error: { message: `Incorrect API key provided: ${auth.slice(7)}`, type: 'invalid_request_error', code: 'invalid_api_key' } });
  return createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const auth = String(req.headers.authorization ?? '');
      const quoting = { 'content-type': 'application/json', 'x-received-authorization': auth };
      const path = req.url!;
      if (path.includes('/echo-403/')) res.writeHead(403, { ...quoting, 'www-authenticate': `Bearer realm="${auth}"` }).end(apiError(auth));
      else if (path.includes('/echo-500/')) res.writeHead(500, quoting).end(apiError(auth));
      else if (path.includes('/echo-200/')) res.writeHead(200, quoting).end(completion(`you sent ${auth}`));
      else if (path.includes('/echo-sse/'))
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${chunk('you sent ')}${chunk(auth)}data: [DONE]\n\n`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(completion('fine'));
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

const ECHOES = ['echo-403', 'echo-500', 'echo-200', 'echo-sse'];

function routes(namespace = 'default'): object[] {
  const backend = (name: string, path: string, priority = 0) => ({
    name,
    baseURL: `${upstreamURL}${path}/v1`,
    priority,
    apiKeySecretRef: { name: 'keys', key: 'upstream' },
  });
  const route = (name: string, backends: object[]) => ({ apiVersion: GV, kind: 'ModelRoute', metadata: { name, namespace }, spec: { backends } });
  return [
    route('plain', [backend('up', '')]),
    ...ECHOES.map((e) => route(e, [backend('up', `/${e}`)])),
    // A 500 quoting the key, failed over: its body is dropped, the next backend answers.
    route('echo-500-then-plain', [backend('echoing', '/echo-500'), backend('up', '', 1)]),
    // Refers to a key the Secret lacks: its status message names the Secret and key, never a value.
    route('missing-key', [{ name: 'up', baseURL: `${upstreamURL}/v1`, apiKeySecretRef: { name: 'keys', key: 'nope' } }]),
    { apiVersion: GV, kind: 'Group', metadata: { name: 'all', namespace }, spec: { models: ['*'] } },
    { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'alice', namespace }, spec: { group: 'all', secretRef: { name: 'keys', key: 'client' } } },
    // Two tokens with the same key: a Conflict whose message must not quote the key.
    { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'alice-twin', namespace }, spec: { group: 'all', secretRef: { name: 'keys', key: 'client' } } },
  ];
}
const keysSecret = (namespace = 'default', labels: Record<string, string> = {}, upstreamValue = upstreamKey.value) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'keys', namespace, labels },
  stringData: { client: client.value, upstream: upstreamValue, other: otherKey.value },
});

const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const post = (api: string, body: object, headers: Record<string, string>, path = '/v1/chat/completions') =>
  fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** Whether text holds the masked form of `key`: exactly as many `*` as it has characters. */
const masks = (text: string | undefined, key: Canary) => new RegExp(`(?<!\\*)\\*{${key.value.length}}(?!\\*)`).test(text ?? '');

/** Resolves once the gateway sends `key` upstream (after a rotation): the echo shows its mask. */
async function sendingKey(api: string, key: Canary): Promise<void> {
  await waitUntil(
    async () => masks(await everythingIn(await post(api, chat('echo-403'), { authorization: `Bearer ${client.value}` })), key),
    15_000,
    `the gateway to send the ${key.name} key upstream`,
  );
}

/** Drives every way a key could come back out through the API port; returns what the clients saw. */
async function drive(api: string, sent: Canary): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const bearer = { authorization: `Bearer ${client.value}` };
  const ask = async (what: string, body: object, headers: Record<string, string>, path?: string) =>
    void (out[what] = await everythingIn(await post(api, body, headers, path)));
  await ask('ok', chat('plain'), bearer);
  for (const e of ECHOES) await ask(`upstream ${e} echoing the key`, chat(e, e === 'echo-sse'), bearer);
  await ask('failover past a 500 echoing the key', chat('echo-500-then-plain'), bearer);
  const wrong = (what: string, authorization: string) => ask(what, chat('plain'), { authorization });
  await wrong('a key one character off', `Bearer ${client.value.slice(0, -1)}x`);
  await wrong('the first half of the key', `Bearer ${client.value.slice(0, client.value.length / 2)}`);
  await wrong('the last half of the key', `Bearer ${client.value.slice(client.value.length / 2)}`);
  await wrong('the key with a suffix', `Bearer ${client.value} extra`);
  await wrong('the key without its scheme', client.value);
  await wrong('the upstream key as a client key', `Bearer ${sent.value}`);
  await ask('the key in the query string', chat('plain'), {}, `/v1/chat/completions?api_key=${client.value}`);
  for (const header of ['x-api-key', 'api-key', 'proxy-authorization', 'cookie']) await ask(`the key as ${header}`, chat('plain'), { [header]: client.value });
  // Two Authorization headers (no client library sends that): the key in the second, behind a wrong first one.
  const twice = await rawRequest(api, [
    `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nAuthorization: Bearer ${client.value}\r\nConnection: close\r\n\r\n`,
  ]);
  out['a second Authorization header'] = twice.text;
  // Not covered on purpose: a key a client pastes into a plain field (the model name, a URL path) is ordinary text
  // to the gateway; it is quoted back to that client in the 404 and the path is in the access log
  // (docs/hardening.md says so).
  // The SDK's view of the echoing upstream: its error message is what applications log.
  const sdk = new OpenAI({ baseURL: `${api}/v1`, apiKey: client.value, maxRetries: 0 });
  for (const model of ['echo-403', 'echo-500']) {
    const failure = await sdk.chat.completions.create(chat(model) as never).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    out[`the SDK error (${model})`] = `${failure!.message} ${JSON.stringify((failure as InstanceType<typeof OpenAI.APIError>).error)}`;
  }
  // The echoes reached the gateway (else the test proves nothing): the client got the masked form.
  for (const e of ECHOES) expect(masks(out[`upstream ${e} echoing the key`], sent), e).toBe(true);
  expect(out['failover past a 500 echoing the key']).toMatch(/^200\n[\s\S]*"fine"/);
  expect(out['a second Authorization header']).toMatch(/^HTTP\/1\.1 401 /);
  return out;
}

describe('secret hygiene: the file source', () => {
  let dir: string;
  let cli: CliRun;
  let api: string;
  let metrics: string;
  const config = (upstreamValue: string) => [keysSecret('default', {}, upstreamValue), ...routes()].map((o) => stringify(o)).join('---\n');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-canary-'));
    writeFileSync(join(dir, 'config.yaml'), config(upstreamKey.value));
    const [port, metricsPort] = [await freePort(), await freePort()];
    cli = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort), '--log-level', 'trace'], {
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

  it('no canary in answers, logs, metrics or check output, through bad keys, echoing upstreams, broken Secret files and a key rotation', async () => {
    const answers = await drive(api, upstreamKey);
    // Secret files that do not parse, with the error's line quoting the value: logged on reload, reported by check.
    writeFileSync(join(dir, 'typo.yaml'), `apiVersion: v1\nkind: Secret\nmetadata: {name: typo}\nstringData:\n  apiKey: >${typoKey.value}\n`);
    writeFileSync(join(dir, 'alias.yaml'), `apiVersion: v1\nkind: Secret\nmetadata: {name: alias}\nstringData:\n  apiKey: *${aliasKey.value}\n`);
    await waitUntil(() => ['typo.yaml', 'alias.yaml'].every((f) => cli.stdout().includes(f)), 10_000);
    // The upstream key rotated: the reload swaps it in; then everything again, with the new key.
    writeFileSync(join(dir, 'config.yaml'), config(rotatedKey.value));
    await sendingKey(api, rotatedKey);
    for (const [k, v] of Object.entries(await drive(api, rotatedKey))) answers[`after reload: ${k}`] = v;
    const scraped = await (await fetch(metrics)).text();
    expect(scraped).toContain('model_gateway_requests_total');
    const check = spawnSync(process.execPath, [cliEntry(), 'check', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    const checkJson = spawnSync(process.execPath, [cliEntry(), 'check', '--output', 'json', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toContain('typo.yaml'); // check did read the broken files
    expect(JSON.parse(checkJson.stdout).errors.length).toBeGreaterThanOrEqual(2);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.stdout().split('\n').length).toBeGreaterThan(50); // a line per request and per reload: plenty to leak into
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

  it('a key file with a broken entry: the refusal names its position, never a key', async () => {
    const good: Canary = { name: 'id-key-file', value: randomBytes(32).toString('hex') };
    const short: Canary = { name: 'id-key-short', value: randomBytes(20).toString('hex') }; // 20 bytes: too short
    const file = join(dir, 'id-keys');
    writeFileSync(file, `# sealing keys\n${good.value}\n${short.value}\n`);
    const run = runCli(['serve', '--config', dir, '--id-keys-file', file, '--log-level', 'trace']);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(/key #2 decodes to 20 bytes/);
    expectNoLeaks({ stdout: run.stdout(), stderr: run.stderr() }, [good, short]);
  });
});

describe('secret hygiene: the Kubernetes source', () => {
  it('no canary in status patches, other API requests, logs or answers, through failing status writes and a Secret rotation', async () => {
    const kube = new FakeApiServer({ requireToken: kubeToken.value });
    await kube.start();
    const dir = mkdtempSync(join(tmpdir(), 'mg-canary-kube-'));
    let cli: CliRun | undefined;
    try {
      const ns = 'team';
      const secretLabels = { 'modelgateway.io/secret': 'true' };
      kube.apply(keysSecret(ns, secretLabels) as never);
      for (const o of routes(ns)) kube.apply(o as never);
      // The first status writes fail: the errors the Kubernetes client raises are logged.
      kube.failRequests({ verb: 'patch', subresource: 'status' }, 500, 3);
      writeFileSync(join(dir, 'config'), kubeConfigYaml(kube.url, ns, kubeToken.value));
      const [port, metricsPort] = [await freePort(), await freePort()];
      const args = ['serve', '--source', 'kubernetes', '--namespaces', ns, '--host', '127.0.0.1', '--log-level', 'trace'];
      cli = runCli([...args, '--port', String(port), '--metrics-port', String(metricsPort)], {
        KUBECONFIG: join(dir, 'config'),
        POD_NAME: 'gateway-0',
        MG_ID_KEYS: idKey.value,
      });
      await cli.waitForLog((l) => l.msg === 'first config loaded; ready', 20_000);
      const api = `http://127.0.0.1:${port}`;
      const answers = await drive(api, upstreamKey);
      kube.apply(keysSecret(ns, secretLabels, rotatedKey.value) as never);
      await sendingKey(api, rotatedKey);
      for (const [k, v] of Object.entries(await drive(api, rotatedKey))) answers[`after rotation: ${k}`] = v;
      // Status is written for every object, including the ones whose refs or keys are wrong, after the failures.
      const statusPatches = () => kube.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status');
      await waitUntil(() => statusPatches().length >= routes(ns).length + 3, 15_000, 'status for every object');
      const writes = kube.requests.filter((r) => r.body !== undefined).map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body)}`);
      expect(writes.join('\n')).toMatch(/Conflict|SecretKeyNotFound/); // the messages that talk about keys were written
      expect(kube.requests.every((r) => r.authenticated)).toBe(true); // the token was in use (and so could leak)
      const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      expect(cli.stdout()).toContain('status write failed'); // the failed writes were logged
      expectNoLeaks(
        {
          ...answers,
          'API server writes': writes.join('\n'),
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
  it('finds a whole secret, a part of one, its first or last 8 characters, and not a masked one', () => {
    const c = canary('self');
    expect(leaksIn(`x ${c.value} y`, [c])).toHaveLength(1);
    expect(leaksIn(`x ${c.value.slice(10, 24)} y`, [c])).toHaveLength(1);
    expect(leaksIn(`key …${c.value.slice(-8)}`, [c])).toHaveLength(1);
    expect(leaksIn(`key ${c.value.slice(0, 8)}…`, [c])).toHaveLength(1);
    expect(leaksIn(`Bearer ${'*'.repeat(c.value.length)}`, [c])).toEqual([]);
    expect(leaksIn(`key …${c.value.slice(-7)}`, [c])).toEqual([]);
  });
});
