// The pool bookkeeping behind kubeRequest (kube-dispatcher.ts), with real undici Agents and no server: what counts
// as a change of connection options, and that a replaced pool is closed only once no request is using it.
// kube-client.test.ts checks the same against the fake API server, counting connections.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { connectionFingerprint, leaseDispatcher } from '../../../src/sources/kubernetes/kube-dispatcher.js';
import { KubeConfig } from '../../../src/sources/kubernetes/kube-client.js';

function kubeConfig(cluster: Record<string, unknown>, token = 'tok'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://10.0.0.1:443', ...cluster }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('connectionFingerprint', () => {
  it('changes with the server and the TLS options, not with the bearer token', async () => {
    const base = await connectionFingerprint(kubeConfig({ caData: Buffer.from('ca-one').toString('base64') }));
    expect(await connectionFingerprint(kubeConfig({ caData: Buffer.from('ca-one').toString('base64') }, 'rotated'))).toBe(base);
    const changed = [
      { caData: Buffer.from('ca-two').toString('base64') },
      { caData: Buffer.from('ca-one').toString('base64'), server: 'https://10.0.0.2:443' },
      { caData: Buffer.from('ca-one').toString('base64'), tlsServerName: 'kubernetes.default' },
      { caData: Buffer.from('ca-one').toString('base64'), skipTLSVerify: true },
    ];
    for (const cluster of changed) expect(await connectionFingerprint(kubeConfig(cluster))).not.toBe(base);
  });

  it("counts a client certificate from an exec credential plugin, not only the kubeconfig's", async () => {
    const withExecCert = (cert: string) => {
      const kc = new KubeConfig();
      const credential = {
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        status: { clientCertificateData: cert, clientKeyData: 'key' },
      };
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: 'https://10.0.0.1:443' }],
        users: [
          {
            name: 'u',
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: process.execPath,
              args: ['-e', `console.log(${JSON.stringify(JSON.stringify(credential))})`],
            },
          },
        ],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      return connectionFingerprint(kc);
    };
    const [one, again, renewed] = await Promise.all([withExecCert('cert-one'), withExecCert('cert-one'), withExecCert('cert-two')]);
    expect(again).toBe(one);
    expect(renewed).not.toBe(one);
  });
});

describe('leaseDispatcher', () => {
  it('keeps the first dispatcher while the fingerprint holds, and closes a replaced one once its requests are done', async () => {
    const kc = kubeConfig({});
    const [first, unused, second] = [new Agent(), new Agent(), new Agent()];
    const a = leaseDispatcher(kc, 'f1', first);
    const b = leaseDispatcher(kc, 'f1', unused);
    expect(a.dispatcher).toBe(first);
    expect(b.dispatcher).toBe(first);
    const c = leaseDispatcher(kc, 'f2', second);
    expect(c.dispatcher).toBe(second);
    // Requests still on the old pool: not closed under them.
    expect(first.closed).toBe(false);
    a.release();
    a.release(); // twice counts once
    expect(first.closed).toBe(false);
    b.release();
    expect(first.closed).toBe(true);
    expect(unused.closed).toBe(false); // never kept, never used: nothing to close
    // Plain http without TLS options: the client gives no dispatcher; undici's global one is used, the kept one retires.
    const d = leaseDispatcher(kc, 'f3', undefined);
    expect(d.dispatcher).toBeUndefined();
    expect(second.closed).toBe(false);
    c.release();
    expect(second.closed).toBe(true);
    d.release();
    // And a later TLS config starts a new pool.
    const third = new Agent();
    expect(leaseDispatcher(kc, 'f3', third).dispatcher).toBe(third);
    await Promise.all([first, unused, second, third].map((agent) => agent.close().catch(() => {})));
  });
});
