// The real API server itself: it starts, answers as the admin, and reports its version (the floor these suites test).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEnvtest, type Envtest, sharedEnvtest } from './envtest.js';

describeEnvtest('real kube-apiserver (envtest)', () => {
  let server: Envtest;
  beforeAll(() => {
    server = sharedEnvtest();
  }, 120_000);
  afterAll(() => server?.stop()); // hands the shared server back

  it('answers kubectl as the admin, at v1.26', () => {
    const r = server.kubectl(['version', '-o', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).serverVersion.minor).toBe('26');
  });
});
