// The access line (docs/usage-and-limits.md, "The usage record") against what the built CLI writes for a request of
// each family, a failover, a failure, refusals and requests the parser refused:
// every field written is documented and the documented always-present fields are there; no key, Authorization or
// query string reaches stdout; and what clients control (a 1 MB model name, long paths, control characters) cannot
// make a line long, split it, or forge one.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { type CliRun, REPO_ROOT, runCli } from '../support/spawn-cli.js';
import { waitUntil } from '../support/wait.js';

/** Field names of the usage record's table (a row may name several, e.g. `inputTokens`, `outputTokens`). */
function documentedFields(): Set<string> {
  const doc = readFileSync(join(REPO_ROOT, 'docs/usage-and-limits.md'), 'utf8');
  const table = doc.slice(doc.indexOf('### The usage record'), doc.indexOf('### Metrics'));
  const fields = new Set<string>();
  for (const line of table.split('\n')) {
    const first = line.split('|')[1];
    if (!line.startsWith('| `') || first === undefined) continue;
    for (const m of first.matchAll(/`([A-Za-z0-9]+)`/g)) fields.add(m[1]!);
  }
  return fields;
}

const SECRET = randomUUID().replaceAll('-', '');
const KEY = `sk-client-${SECRET}`;
const UPSTREAM_KEY = `sk-upstream-${SECRET}`;
const QUERY_SECRET = `q${SECRET}`;
let dir: string;
let gateway: CliRun;
let api: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-access-line-'));
  const refused = `http://127.0.0.1:${await freePort()}/v1`;
  await writeFile(
    join(dir, 'config.yaml'),
    `apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {client: ${KEY}, upstream: ${UPSTREAM_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: m}
spec:
  backends:
  - {name: down, baseURL: "${refused}", apiKeySecretRef: {name: keys, key: upstream}, priority: 0}
  - {name: demo, baseURL: "demo://", priority: 1, pricing: {inputPerMTok: "1", outputPerMTok: "2"}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gone}
spec:
  backends: [{name: down, baseURL: "${refused}", apiKeySecretRef: {name: keys, key: upstream}}]
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team}
spec: {models: ["*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: dev}
spec: {group: team, secretRef: {name: keys, key: client}}
`,
  );
  gateway = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
  api = String((await gateway.waitForLog((l) => l.msg === 'model-gateway listening')).api);
  await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
});

afterAll(async () => {
  if (gateway?.child.exitCode === null) gateway.child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** Bytes straight onto a socket: what no HTTP client would send. Resolves when the gateway closes it. */
function raw(text: string): Promise<void> {
  return new Promise((resolve) => {
    const s = connect(Number(new URL(api).port), '127.0.0.1', () => s.end(text));
    s.on('data', () => undefined);
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });
}

async function load(): Promise<void> {
  const openai = new OpenAI({ baseURL: `${api}/v1?key=${QUERY_SECRET}`, apiKey: KEY, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'hello' }];
  await openai.chat.completions.create({ model: 'm', messages });
  for await (const _ of await openai.chat.completions.create({ model: 'm', messages, stream: true, stream_options: { include_usage: true } }));
  await openai.responses.create({ model: 'm', input: 'hello' });
  await openai.embeddings.create({ model: 'm', input: 'hello' });
  await openai.images.generate({ model: 'm', prompt: 'a cat', size: '1024x1024' });
  await (await openai.audio.speech.create({ model: 'm', voice: 'alloy', input: 'hello' })).arrayBuffer();
  await openai.audio.transcriptions.create({ model: 'm', file: await toFile(Buffer.alloc(2048), 'a.wav', { type: 'audio/wav' }) });
  await openai.videos.create({ model: 'm', prompt: 'a wave' });
  const anthropic = new Anthropic({ baseURL: api, apiKey: KEY, maxRetries: 0 });
  await anthropic.messages.create({ model: 'm', max_tokens: 16, messages });
  // Failures and refusals.
  await expect(openai.chat.completions.create({ model: 'gone', messages })).rejects.toThrow();
  await expect(openai.chat.completions.create({ model: `attack${'x'.repeat(1024 * 1024)}`, messages })).rejects.toThrow();
  await expect(new OpenAI({ baseURL: `${api}/v1`, apiKey: `${KEY}-wrong`, maxRetries: 0 }).models.list()).rejects.toThrow();
  await fetch(`${api}/v1/models/${'y'.repeat(8000)}?key=${QUERY_SECRET}`, { headers: { 'x-api-key': KEY } });
  await fetch(`${api}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'x-request-id': `a\tb${'z'.repeat(5000)}` },
    body: '{',
  });
  // A header value with control characters, a request line with a forged log line: node's parser refuses both.
  await raw(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nX-Note: a\u0000\u001b[31m\r\n\r\n`);
  await raw(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\u0001\u001b[31mb\r\n\r\n`);
  await raw(`GET /v1/models?key=${QUERY_SECRET}\n{"msg":"request","status":200} HTTP/1.1\r\nHost: x\r\n\r\n`);
}

it('writes only documented fields, the always-present ones on every line, no secret, and bounded lines', async () => {
  await load();
  const REQUESTS = 17;
  const lines = await waitUntil(
    () => {
      const all = gateway.stdout().split('\n').filter(Boolean);
      return all.filter((l) => l.includes('"msg":"request"')).length >= REQUESTS ? all : undefined;
    },
    10_000,
    'an access line per request',
  );
  const output = gateway.stdout();
  for (const secret of [SECRET, 'authorization', 'Bearer']) expect(output, secret).not.toContain(secret);
  for (const line of lines) {
    expect(line.length, line.slice(0, 200)).toBeLessThan(2048);
    expect(
      [...line].some((c) => c.charCodeAt(0) < 0x20),
      line.slice(0, 200),
    ).toBe(false); // raw control characters
    expect(() => JSON.parse(line), line.slice(0, 200)).not.toThrow();
  }
  const access = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.msg === 'request');
  expect(access).toHaveLength(REQUESTS);

  const documented = documentedFields();
  const undocumented = [...new Set(access.flatMap(Object.keys))].filter((k) => !documented.has(k));
  expect(undocumented, 'fields written but not in the usage record table').toEqual([]);
  for (const a of access) for (const k of ['time', 'reqId', 'status', 'family', 'msg']) expect(a[k], `${k} in ${JSON.stringify(a)}`).toBeDefined();

  const routed = access.filter((a) => a.tokenRef !== undefined && a.backend !== undefined);
  const families = routed.map((a) => a.family);
  for (const f of ['chat.completions', 'responses', 'embeddings', 'images.generations', 'audio.speech', 'audio.transcriptions', 'videos', 'messages'])
    expect(families, f).toContain(f);
  for (const a of routed) {
    for (const k of ['tokenRef', 'group', 'model', 'backend', 'durationMs', 'inputTokens', 'outputTokens', 'estimated'])
      expect(a[k], `${k} in ${JSON.stringify(a)}`).toBeDefined();
  }
  // The refused backend before the one that answered; and a request that failed altogether names its attempt.
  // (Until `down` is ejected, after its third failure: later requests go to demo at once.)
  expect(routed[0]).toMatchObject({ status: 200, backend: 'demo', attempts: 2, upstreamError: ['down:ECONNREFUSED'] });
  expect(access.find((a) => a.model === 'gone')).toMatchObject({ status: 502, upstreamError: ['down:ECONNREFUSED'] });
  // Client-controlled strings are never written as sent: the unknown model is `unknown`, a path is cut.
  expect(access.filter((a) => String(a.model).startsWith('attack') || String(a.path ?? '').length > 256)).toEqual([]);
}, 30_000);
