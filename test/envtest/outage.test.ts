// The real API server stopped for a while (the process killed; etcd stays) and started again on the same port:
// the gateway keeps serving from its last snapshot meanwhile, and once the server is back a change applied to it
// is served within a second of the apply completing. The server may be one that other envtest files use before or
// after: it is running again when the test ends.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FaultyUpstream, startFaultyUpstream } from '../fakes/faulty-upstream.js';
import { waitUntil } from '../support/wait.js';
import { killApiServer } from './apiserver-restart.js';
import { describeEnvtest, type Envtest, sharedEnvtest } from './envtest.js';
import { apply, type ChartGateway, clientKey, deployChartRelease, installCrds, scratch, startChartGateway, tenantObjects } from './gateway-cluster.js';

const NS = 'outage';
const DOWN_MS = 3_000;

describeEnvtest('the gateway through a real API server outage', () => {
  let server: Envtest;
  let upstream: FaultyUpstream;
  let gateway: ChartGateway;
  const files = scratch();

  beforeAll(async () => {
    server = sharedEnvtest();
    installCrds(server);
    upstream = await startFaultyUpstream('upstream');
    const { rendered, kubeconfig } = deployChartRelease(server, files.dir, NS, {}, { objects: tenantObjects(NS, upstream.baseURL) });
    gateway = await startChartGateway(files.dir, rendered, kubeconfig, `${NS}-pod-0`);
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    server?.stop(); // hands the shared server back
    await upstream?.close();
    files.remove();
  });

  const chat = (model: string) => gateway.client(clientKey(NS)).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

  it('serves while the API server is down, and serves a change applied after its return within a second', { timeout: 60_000 }, async () => {
    expect((await chat(`envtest-${NS}`)).choices[0]?.message.content).toBe('from upstream');
    const restart = await killApiServer(server);
    const downSince = Date.now();
    // Down long enough for the watches to break and the reflectors to back off several times.
    await gateway.run.waitForLog((l) => l.msg === 'kubernetes list/watch failed; keeping the last snapshot and retrying', 10_000);
    let servedWhileDown = 0;
    while (Date.now() - downSince < DOWN_MS) {
      expect((await chat(`envtest-${NS}`)).choices[0]?.message.content).toBe('from upstream');
      servedWhileDown++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(servedWhileDown).toBeGreaterThan(5);

    await restart();
    const backAt = Date.now();
    // A new ModelRoute (its model matches the Group's "envtest-*"), applied as soon as the server answers.
    const route = tenantObjects(NS, upstream.baseURL, 'envtest-late').find((o) => o.kind === 'ModelRoute')!;
    apply(server, [route]);
    const appliedAt = Date.now();
    await waitUntil(
      () =>
        chat('envtest-late').then(
          (r) => r.choices[0]?.message.content === 'from upstream',
          () => false,
        ),
      10_000,
      'the new ModelRoute to be served',
    );
    const servedAfterMs = Date.now() - appliedAt;
    console.info(
      `outage: ${backAt - downSince} ms from the kill to /readyz (${servedWhileDown} requests served meanwhile); the apply took ${appliedAt - backAt} ms; the new route was served ${servedAfterMs} ms after the apply completed`,
    );
    expect(servedAfterMs).toBeLessThanOrEqual(1_000);
  });
});
