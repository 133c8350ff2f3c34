// A KubeConfig pointing the real client at the fake API server, built in code (no file, no cluster). The client
// refuses plain HTTP with a bearer token unless TLS verification is off, hence skipTLSVerify for http:// URLs.
import { KubeConfig } from '@kubernetes/client-node';

export function kubeConfigFor(serverURL: string, namespace = 'default', token = 'fake-service-account-token'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: serverURL, skipTLSVerify: true }],
    users: [{ name: 'gateway', token }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'gateway', namespace }],
    currentContext: 'fake',
  });
  return kc;
}

/** The same as a kubeconfig file's text, for tests of --kubeconfig. */
export function kubeConfigYaml(serverURL: string, namespace = 'default', token = 'fake-service-account-token'): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: "${serverURL}", insecure-skip-tls-verify: ${serverURL.startsWith('http:')}}
users:
- name: gateway
  user: {token: ${token}}
contexts:
- name: fake
  context: {cluster: fake, user: gateway, namespace: ${namespace}}
current-context: fake
`;
}
