// Sealed-id keys through the real executable: flag validation, ids surviving a restart with the same key,
// the warning without a key, and `--workers N` without a key still sharing one key across workers.
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { runCli, type CliRun } from '../support/spawn-cli.js';

const running: CliRun[] = [];
afterEach(() => {
  for (const r of running.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});
const run = (args: string[], env: Record<string, string> = {}) => {
  const r = runCli(args, env);
  running.push(r);
  return r;
};

/** One request on a fresh connection (so a cluster hands it to the next worker). */
function call(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { authorization: 'Bearer mg-demo-key', ...(data ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const serveArgs = (port: number) => ['serve', '--config', 'examples/local', '--host', '127.0.0.1', '--port', String(port), '--metrics-port', '0'];
const ready = (r: CliRun) => r.waitForLog((l) => l.msg === 'first config loaded; ready', 30_000);

describe('serve: sealed-id keys', () => {
  it('refuses a short key in one line without echoing it', async () => {
    const short = randomBytes(16).toString('hex');
    const r = run(['serve', '--id-keys', short]);
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toMatch(/^model-gateway: --id-keys.*key #1 decodes to 16 bytes.*at least 32/);
    expect(r.stderr()).not.toContain(short);
  });

  it('a restarted process with the same key (env MG_ID_KEYS) serves ids minted before the restart', async () => {
    const key = randomBytes(32).toString('base64');
    const port = await freePort();
    const first = run(serveArgs(port), { MG_ID_KEYS: key });
    await ready(first);
    const created = await call(port, 'POST', '/v1/responses', { model: 'demo-chat', input: 'remember me' });
    expect(created.status).toBe(200);
    const id = String(created.json['id']);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.stdout()).not.toContain('no sealed-id key configured');

    const second = run(serveArgs(port), { MG_ID_KEYS: key });
    await ready(second);
    // The demo backend lives in the process, so the object itself is gone: the id still verifies and is
    // routed (the demo answers its own 404), whereas a foreign id is refused by the gateway before that.
    const again = await call(port, 'GET', `/v1/responses/${id}`);
    expect(again.status).toBe(404);
    expect(again.json).not.toEqual({ error: { message: 'No response found with that id.', type: 'invalid_request_error', param: null, code: 'not_found' } });
    const forged = await call(port, 'GET', `/v1/responses/${id.slice(0, -2)}AA`);
    expect(forged.json).toEqual({ error: { message: 'No response found with that id.', type: 'invalid_request_error', param: null, code: 'not_found' } });
  }, 60_000);

  it('--workers 2 without a key: one generated key for all workers (warned once), ids valid on every worker', async () => {
    const port = await freePort();
    const r = run([...serveArgs(port), '--workers', '2']);
    await r.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 1, 30_000);
    await r.waitForLog((l) => l.msg === 'first config loaded; ready' && l.worker === 2, 30_000);
    const created = await call(port, 'POST', '/v1/videos', { model: 'demo-media', prompt: 'shared' });
    expect(created.status).toBe(200);
    const id = String(created.json['id']);
    // The demo store is per worker, so a retrieve on the other worker reaches the demo and gets its 404; what
    // matters is that no worker refuses the id itself. Fresh connections alternate between the workers.
    const refusals = [];
    for (let i = 0; i < 6; i++) {
      const got = await call(port, 'GET', `/v1/videos/${id}`);
      if ((got.json['error'] as { message?: string } | undefined)?.message === 'No video found with that id.') refusals.push(got);
    }
    expect(refusals).toEqual([]);
    expect(r.stdout().match(/no sealed-id key configured/g)).toHaveLength(1);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
  }, 60_000);
});
