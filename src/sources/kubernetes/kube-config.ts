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

/** "*" → all namespaces (undefined); otherwise a de-duplicated list. */
export type NamespaceScope = readonly string[] | 'all';

/**
 * --namespaces: "*" for all, "a,b" for a list, empty for the pod's own namespace (POD_NAMESPACE, then the
 * service-account namespace file, then the kubeconfig context's namespace, then "default").
 */
export function resolveNamespaces(spec: string | undefined, kc: KubeConfig | undefined, options: KubeConfigOptions = {}): NamespaceScope {
  const text = (spec ?? '').trim();
  if (text === '*') return 'all';
  const list = [
    ...new Set(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (list.length > 0) {
    if (list.includes('*')) throw new Error('--namespaces: "*" cannot be combined with names');
    return list;
  }
  const env = options.env ?? process.env;
  if (env.POD_NAMESPACE) return [env.POD_NAMESPACE];
  try {
    const ns = readFileSync(`${options.serviceAccountRoot ?? ''}${SERVICE_ACCOUNT_DIR}/namespace`, 'utf8').trim();
    if (ns) return [ns];
  } catch {
    // not in a pod
  }
  const ctx = kc?.getContextObject(kc.getCurrentContext());
  return [ctx?.namespace || 'default'];
}
