// A price that can never apply, through the file source of the real executable: the route serves, and the gateway
// logs a warning naming the price and the backend.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { type CliRun, runCli } from '../support/spawn-cli.js';

const MANIFEST = `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat}
spec:
  endpoints: [chat.completions]
  backends: [{name: up, baseURL: "http://127.0.0.1:9/v1", pricing: {inputPerMTok: "1", imagePer: [{price: "0.04"}]}}]
`;

let r: CliRun | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (r?.child.exitCode === null) r.child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('serve --config logs a warning for imagePer on a chat-only route, and serves the route', async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-idle-prices-'));
  await writeFile(join(dir, 'route.yaml'), MANIFEST);
  r = runCli(['serve', '--config', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
  const warning = await r.waitForLog((l) => typeof l.warning === 'string', 30_000);
  expect(warning).toMatchObject({
    level: 40, // pino's warn
    msg: 'ModelRoute default/chat: backend "up": pricing.imagePer can never apply, since the route serves none of images.generations, images.edits',
  });
  const serving = await r.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('config version 1 serving'), 30_000);
  expect(serving).toMatchObject({ routes: 1, notReady: 0 });
}, 60_000);
