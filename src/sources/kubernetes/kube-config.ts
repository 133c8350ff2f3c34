// Where the gateway finds the API server and which namespaces it watches. In a pod: the service account
// (in-cluster config); elsewhere: --kubeconfig / KUBECONFIG / ~/.kube/config.
import { readFileSync } from 'node:fs';
import { KubeConfig } from './kube-client.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeConfigOptions {
  /** Path of a kubeconfig file (--kubeconfig); wins over in-cluster config. */
  readonly kubeconfig?: string;
  /** Environment (KUBERNETES_SERVICE_HOST/PORT, POD_NAMESPACE); process.env by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** Prefix of /var/run/secrets/kubernetes.io/serviceaccount (tests put the token, CA and namespace files elsewhere). */
  readonly serviceAccountRoot?: string;
}

export function loadKubeConfig(options: KubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const kc = new KubeConfig();
  if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    // In a pod. The client reads the host and port from process.env itself and re-reads the token file every
    // minute, so rotated (bound) service-account tokens keep working.
    kc.loadFromCluster(options.serviceAccountRoot ?? '');
  } else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: run in a pod, or pass --kubeconfig / set KUBECONFIG');
  return kc;
}

/** The namespaces watched: a list, or every namespace. */
export type NamespaceScope = readonly string[] | 'all';

export interface WatchScope {
  readonly namespaces: NamespaceScope;
  /** Where the Lease lives: the gateway's own namespace; outside a pod, the first watched one. */
  readonly leaseNamespace: string;
}

/**
 * What --source kubernetes watches: --namespaces ("*" or a list, already parsed) when given, else the pod's own
 * namespace (POD_NAMESPACE, else the service-account namespace file), else, outside a pod or with an explicit
 * kubeconfig, the kubeconfig context's namespace ("default" when it names none). Undefined when nothing says: a
 * pod without its namespace must be told rather than guess.
 */
export function resolveWatchScope(spec: readonly string[] | '*' | undefined, kc: KubeConfig, options: KubeConfigOptions = {}): WatchScope | undefined {
  const env = options.env ?? process.env;
  const own = podNamespace(env, options.serviceAccountRoot);
  const context = () => kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
  const outsideAPod = options.kubeconfig !== undefined || !env.KUBERNETES_SERVICE_HOST;
  const namespaces: NamespaceScope | undefined = spec === '*' ? 'all' : (spec ?? own ?? (outsideAPod ? [context()] : undefined));
  if (namespaces === undefined) return undefined;
  return { namespaces, leaseNamespace: own?.[0] ?? (namespaces === 'all' ? context() : namespaces[0]!) };
}

/** The pod's own namespace: POD_NAMESPACE (downward API), else the service-account file; undefined outside a pod. */
function podNamespace(env: NodeJS.ProcessEnv = process.env, serviceAccountRoot = ''): readonly string[] | undefined {
  const fromEnv = env.POD_NAMESPACE?.trim();
  if (fromEnv) return [fromEnv];
  try {
    const ns = readFileSync(`${serviceAccountRoot}${SERVICE_ACCOUNT_DIR}/namespace`, 'utf8').trim();
    return ns ? [ns] : undefined;
  } catch {
    return undefined;
  }
}
