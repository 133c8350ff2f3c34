// The real executable on a copy of examples/local (the demo backend serves every family), plus two routes to an
// upstream in this process that fails the way error tests need: `limited` answers 429 with retry-after 7, `cut`
// sends one stream event (chat or Responses) and then drops the connection. Shared by the real-client tests.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';

export const EXAMPLE_KEY = 'mg-demo-key';

export interface ServedExamples {
  /** Base URL clients are given, ending in /v1. */
  readonly baseURL: string;
  stop(): Promise<void>;
}

function misbehavingUpstream(): Server {
  return createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url!.startsWith('/limited/')) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        return void res.end(
          JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } }),
        );
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url!.endsWith('/responses')) {
        const created = {
          type: 'response.created',
          sequence_number: 0,
          response: { id: 'resp_up1', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [] },
        };
        res.write(`event: response.created\ndata: ${JSON.stringify(created)}\n\n`);
      } else {
        res.write(
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'half' }, finish_reason: null }] })}\n\n`,
        );
      }
      setTimeout(() => res.socket?.destroy(), 20);
    });
  });
}

export async function startServedExamples(): Promise<ServedExamples> {
  const upstream = misbehavingUpstream();
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const up = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'mg-clients-'));
  cpSync(join(REPO_ROOT, 'examples/local'), dir, { recursive: true });
  const route = (name: string, path: string, endpoints: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  endpoints: [${endpoints}]
  backends: [{name: up, baseURL: "${up}${path}/v1", apiKeySecretRef: {name: openai-credentials, key: apiKey}}]
`;
  writeFileSync(join(dir, 'routes/misbehaving.yaml'), route('limited', '/limited', 'chat.completions') + route('cut', '/cut', 'chat.completions, responses'));
  writeFileSync(join(dir, 'access/groups.yaml'), 'apiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: developers}\nspec: {models: ["*"]}\n');
  const gateway: CliRun = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
  const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening');
  await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
  return {
    baseURL: `${String(listening.api)}/v1`,
    async stop() {
      if (gateway.child.exitCode === null) gateway.child.kill('SIGTERM');
      await gateway.exited;
      await new Promise<void>((r) => upstream.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
