// One connection pool per KubeConfig for kubeRequest (lists, status writes, the Lease).
//
// Why: @kubernetes/client-node's applySecurityAuthentication builds a NEW undici Agent on every call whenever the
// cluster has TLS options (a CA, client certificates, skipTLSVerify: every real cluster). Using it per request
// means a new TCP connection and TLS handshake per request, each then left idle in keep-alive until the API
// server closes it, so connections pile up with every burst of status writes. So kubeRequest keeps the first
// such Agent and reuses it for as long as the connection options it was built from stay the same.
//
// "The same" is a fingerprint of what the client would build a dispatcher from now: the server, and
// createDispatcherOptions over the options applyToHTTPSOptions gathers (CA, client certificate and key,
// skipTLSVerify, TLS server name, proxy). Both are public KubeConfig methods, and applyToHTTPSOptions runs the
// auth plugins too, so client certificates from an exec plugin count, not only the kubeconfig's. CA and
// certificate files are re-read on every call, so a CA rotated in place (a pod's mounted ca.crt) or a renewed
// certificate gives a new fingerprint: the new Agent is adopted and the old one closed once its requests are
// done. Bearer tokens are headers, still applied per request by applySecurityAuthentication; they don't touch
// the pool. The price: the auth plugins run twice per request (both calls hit their credential caches), and the
// client still constructs an Agent per call that, unless adopted, is dropped unused (no socket).
import { createHash } from 'node:crypto';
import type { AgentOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { Dispatcher } from 'undici';

interface Pool {
  readonly fingerprint: string;
  readonly dispatcher: Dispatcher;
  /** Requests using it now; a retired pool closes when this drops to 0 (fetch dispatches a few ticks after the
   *  lease, and a closed Agent refuses new requests, so closing at once could fail a request just leased). */
  users: number;
  retired: boolean;
}

/** A dispatcher for one request; release() once its response is read. `undefined` = undici's global dispatcher. */
export interface DispatcherLease {
  readonly dispatcher: Dispatcher | undefined;
  release(): void;
}

const pools = new WeakMap<KubeConfig, Pool>();

/**
 * The fingerprint of the connection options `kc` would use now. Take it BEFORE applySecurityAuthentication builds
 * its dispatcher: if the options change in between, the adopted dispatcher is newer than its fingerprint, and the
 * next request sees a mismatch and swaps once more; the other order could keep an outdated dispatcher.
 */
export async function connectionFingerprint(kc: KubeConfig): Promise<string> {
  const opts: AgentOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const cluster = kc.getCurrentCluster();
  // Buffers (CA, certificate, key) serialize with all their bytes; the hash keeps no key material around.
  const options = JSON.stringify([cluster?.server, kc.createDispatcherOptions(cluster, opts)]);
  return createHash('sha256').update(options).digest('base64');
}

/**
 * The dispatcher to use for a request: the kept one while `fingerprint` matches; otherwise `fresh` (the one
 * applySecurityAuthentication just built) becomes the kept one and the previous one is retired. A `fresh` that is
 * not adopted was never used, so it holds no connection. No `fresh` means the client wants undici's global
 * dispatcher (plain http without TLS options).
 */
export function leaseDispatcher(kc: KubeConfig, fingerprint: string, fresh: Dispatcher | undefined): DispatcherLease {
  let pool = pools.get(kc);
  if (fresh === undefined || pool?.fingerprint !== fingerprint) {
    if (pool) retire(pool);
    pools.delete(kc);
    if (fresh === undefined) return { dispatcher: undefined, release: () => {} };
    pool = { fingerprint, dispatcher: fresh, users: 0, retired: false };
    pools.set(kc, pool);
  }
  const leased = pool;
  leased.users++;
  let released = false;
  return {
    dispatcher: leased.dispatcher,
    release: () => {
      if (released) return;
      released = true;
      leased.users--;
      if (leased.retired && leased.users === 0) close(leased);
    },
  };
}

function retire(pool: Pool): void {
  pool.retired = true;
  if (pool.users === 0) close(pool);
}

// Graceful: requests already dispatched finish first. A failure to close an unused pool is nobody's concern.
function close(pool: Pool): void {
  pool.dispatcher.close().catch(() => {});
}
