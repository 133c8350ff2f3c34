// The gateway's one entry to @kubernetes/client-node. The client does what it is good at: reading kubeconfig
// files and in-cluster config (KubeConfig), authenticating requests (tokens, rotated service-account tokens,
// client certificates, exec/OIDC plugins, the cluster CA and TLS options: applySecurityAuthentication) and
// watching (Watch). The requests themselves — lists, the status patch, the Lease — are plain JSON over undici
// (kubeRequest below), with the same authentication the client's own Watch uses, over one connection pool per
// KubeConfig (kube-dispatcher.ts).
//
// Why not the generated API classes: the package's KubeConfig module imports the generated barrel
// (dist/gen/index.js: every API group's client and every model class) for two small helpers. Loading it would cost
// every gateway pod a large share of its memory (bench:config shows the RSS of the config path). So, before the
// client is loaded, a module resolution hook points that one import, from that one file, at a two-line module
// re-exporting exactly those two helpers from the package's own files (the same module instances the barrel would
// give). Nothing else is redirected; if a future version
// of the client needed more from the barrel, loading this module would fail at once with a missing-export
// error (kube-client.test.ts loads it), not later at run time.
import { registerHooks } from 'node:module';
import type { KubeConfig as KubeConfigType } from '@kubernetes/client-node/dist/config.js';
import type { RequestContext as RequestContextType } from '@kubernetes/client-node/dist/gen/http/http.js';
import type { Watch as WatchType } from '@kubernetes/client-node/dist/watch.js';
import { fetch } from 'undici';
import { connectionFingerprint, leaseDispatcher } from './kube-dispatcher.js';

const BARREL = '/@kubernetes/client-node/dist/gen/index.js';
const IMPORTER = '/@kubernetes/client-node/dist/config.js';

/**
 * True when the client's KubeConfig was loaded without the generated API barrel (see above). Read by a test in a
 * child process (test/config/sources/kube-client.test.ts).
 * @public
 */
export let loadedWithoutGeneratedApis = false;

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.endsWith(BARREL) && context.parentURL?.endsWith(IMPORTER)) {
      loadedWithoutGeneratedApis = true;
      const dir = resolved.url.slice(0, -'index.js'.length);
      // The same two bindings, from the package's own files (the module instances the barrel re-exports).
      const source = `export { createConfiguration } from ${JSON.stringify(`${dir}configuration.js`)};\nexport { ServerConfiguration } from ${JSON.stringify(`${dir}servers.js`)};\n`;
      return { url: `data:text/javascript,${encodeURIComponent(source)}`, format: 'module', shortCircuit: true };
    }
    return resolved;
  },
});

const config = await import('@kubernetes/client-node/dist/config.js');
const watch = await import('@kubernetes/client-node/dist/watch.js');
const http = await import('@kubernetes/client-node/dist/gen/http/http.js');

export const KubeConfig: typeof KubeConfigType = config.KubeConfig;
export type KubeConfig = KubeConfigType;
export const Watch: typeof WatchType = watch.Watch;
export type Watch = WatchType;
const RequestContext: typeof RequestContextType = http.RequestContext;
const HttpMethod = http.HttpMethod;

/** A failed API request; `code` is the HTTP status (404, 409, 410, …), as the generated client's ApiException has it. */
export class KubeApiError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export interface KubeRequest {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH';
  /** Query parameters; undefined and empty values are left out. */
  readonly query?: Record<string, string | number | undefined>;
  readonly body?: unknown;
  /** Content type of the body (default application/json; application/merge-patch+json for merge patches). */
  readonly contentType?: string;
  /** Gives up after this long (default REQUEST_TIMEOUT_MS; shorter for an answer of no use later, a Lease renewal). */
  readonly timeoutMs?: number;
}

/**
 * How long a request may go unanswered: the API server's own request timeout (60 s), after which it answers 504
 * itself. Longer means no answer is coming (a connection gone silent), and undici alone would wait five minutes.
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** One JSON request to the API server of `kc`'s current cluster, authenticated by the client. */
export async function kubeRequest<T = unknown>(kc: KubeConfig, path: string, req: KubeRequest = {}): Promise<T> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No currently active cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const method = req.method ?? 'GET';
  const timeoutMs = req.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const ctx = new RequestContext(url.toString(), HttpMethod[method]);
  ctx.setHeaderParam('Accept', 'application/json');
  if (req.body !== undefined) ctx.setHeaderParam('Content-Type', req.contentType ?? 'application/json');
  // The client builds a new dispatcher per call; the request goes over the one kept for kc (kube-dispatcher.ts).
  const fingerprint = await connectionFingerprint(kc);
  await kc.applySecurityAuthentication(ctx);
  const lease = leaseDispatcher(kc, fingerprint, ctx.getDispatcher());
  try {
    const res = await fetch(url, {
      method,
      headers: ctx.getHeaders(),
      dispatcher: lease.dispatcher,
      ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status < 200 || res.status > 299) {
      // Only the status goes into the error (and from there into logs): the body may echo an object.
      await res.body?.cancel();
      throw new KubeApiError(`${method} ${url.pathname}: HTTP ${res.status}`, res.status);
    }
    return (await res.json()) as T;
  } catch (err) {
    // An AbortSignal timeout is a DOMException whose numeric `code` (23) would pass for an HTTP status: say what it is.
    if ((err as Error).name === 'TimeoutError')
      throw Object.assign(new Error(`${method} ${url.pathname}: no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
    throw err;
  } finally {
    lease.release();
  }
}
