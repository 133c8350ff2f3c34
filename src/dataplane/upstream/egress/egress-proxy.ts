// Egress through a proxy when the environment names one, as curl and most tools read it: HTTPS_PROXY for https
// origins, HTTP_PROXY for http ones (either also lower case), NO_PROXY for hosts reached directly. undici's
// EnvHttpProxyAgent applies those rules; this module only decides whether a proxy is configured at all, so that a
// gateway without one keeps its plain per-origin pools and undici's global dispatcher, exactly as before.
import { type Dispatcher, EnvHttpProxyAgent } from 'undici';

type Env = Readonly<Record<string, string | undefined>>;

/** The proxy variables as they are now ('' for none), read as EnvHttpProxyAgent reads them (lower case first). */
function proxyVariables(env: Env): string {
  const http = env['http_proxy'] ?? env['HTTP_PROXY'] ?? '';
  const https = env['https_proxy'] ?? env['HTTPS_PROXY'] ?? '';
  return http === '' && https === '' ? '' : `${http} ${https}`;
}

/** Whether HTTPS_PROXY or HTTP_PROXY is set (NO_PROXY alone changes nothing). */
export function proxyConfigured(env: Env = process.env): boolean {
  return proxyVariables(env) !== '';
}

/** A dispatcher that follows the proxy variables, with the given pool options for each origin it reaches. */
export function envProxyAgent(options: EnvHttpProxyAgent.Options = {}): Dispatcher {
  return new EnvHttpProxyAgent(options);
}

/**
 * The variables for node's own http clients (an http(s).Agent's `proxyEnv`), read as EnvHttpProxyAgent reads them:
 * lower case first, and HTTP_PROXY for https origins too when HTTPS_PROXY is unset, which node alone would not do.
 */
export function nodeProxyEnv(env: Env = process.env): Record<string, string> {
  const http = env['http_proxy'] ?? env['HTTP_PROXY'] ?? '';
  const https = env['https_proxy'] ?? env['HTTPS_PROXY'] ?? '';
  return { HTTP_PROXY: http, HTTPS_PROXY: https || http, NO_PROXY: env['no_proxy'] ?? env['NO_PROXY'] ?? '' };
}

let shared: { readonly variables: string; readonly agent: Dispatcher } | undefined;

/**
 * For the identity libraries' token requests: the proxy-following dispatcher when a proxy is configured, else
 * undefined (undici's global dispatcher). One per process, made again only if the variables change.
 */
export function tokenDispatcher(): Dispatcher | undefined {
  const variables = proxyVariables(process.env);
  if (variables === '') return undefined;
  if (shared?.variables !== variables) {
    shared?.agent.close().catch(() => {});
    shared = { variables, agent: envProxyAgent() };
  }
  return shared.agent;
}
