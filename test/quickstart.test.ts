// The README's quick start, for real: the executable on examples/local/, called with the official SDK and the
// example key, through the built-in demo backend (no network, no upstream key).
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, type CliRun } from './support/spawn-cli.js';

const EXAMPLE_KEY = 'mg-demo-key';
let gateway: CliRun;
let apiURL: string;
let metricsURL: string;
let client: OpenAI;

beforeAll(async () => {
  gateway = runCli(['serve', '--config', 'examples/local', '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
  const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
  apiURL = String(listening.api);
  metricsURL = String(listening.metrics);
  await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
  client = new OpenAI({ baseURL: `${apiURL}/v1`, apiKey: EXAMPLE_KEY, maxRetries: 0 });
}, 30_000);

afterAll(async () => {
  gateway.child.kill('SIGTERM');
  expect(await gateway.exited).toBe(0);
});

describe('quick start on examples/local', () => {
  it('the README shows the two commands, the example key and a curl to chat completions', () => {
    const readme = readFileSync(`${REPO_ROOT}/README.md`, 'utf8');
    const quickstart = readme.slice(readme.indexOf('<!-- section: quickstart -->'), readme.indexOf('<!-- section: tests -->'));
    expect(quickstart).toContain('npm ci && npm start');
    expect(quickstart).toContain('npm test');
    expect(quickstart).toContain(`Authorization: Bearer ${EXAMPLE_KEY}`);
    expect(quickstart).toMatch(/curl -s http:\/\/127\.0\.0\.1:8080\/v1\/chat\/completions/);
    const pkg = JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toContain('serve --config examples/local');
  });

  it('lists the models the example key may use', async () => {
    const ids = (await client.models.list()).data.map((m) => m.id).sort();
    expect(ids).toEqual(['demo-chat', 'demo-embed', 'demo-media', 'gpt-4o-mini']);
  });

  it('answers chat completions through the demo backend', async () => {
    const r = await client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'Hello, gateway!' }] });
    expect(r.choices[0]?.message.content).toContain('You said: Hello, gateway!');
    expect(r.model).toBe('demo-chat');
  });

  it('streams chat completions', async () => {
    const stream = await client.chat.completions.create({ model: 'demo-chat', stream: true, messages: [{ role: 'user', content: 'stream it' }] });
    let text = '';
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toContain('You said: stream it');
  });

  it('returns embeddings', async () => {
    const r = await client.embeddings.create({ model: 'demo-embed', input: ['one', 'two'] });
    expect(r.data).toHaveLength(2);
    expect(r.data[0]!.embedding.length).toBeGreaterThan(0);
    expect(r.data[0]!.embedding).not.toEqual(r.data[1]!.embedding);
  });

  it('refuses a wrong key', async () => {
    const bad = new OpenAI({ baseURL: `${apiURL}/v1`, apiKey: 'not-the-key', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
  });

  it('serves /metrics on the metrics port only', async () => {
    const m = await fetch(metricsURL);
    expect(m.status).toBe(200);
    expect(await m.text()).toMatch(/^model_gateway_config_reloads_total 1$/m);
    expect((await fetch(`${apiURL}/metrics`)).status).toBe(404);
  });
});
