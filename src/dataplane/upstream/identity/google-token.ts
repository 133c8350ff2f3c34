// gcp: a Google OAuth2 access token (Vertex AI), from Google's maintained auth library: a service account's JSON key
// (signed JWT exchanged at the key's token endpoint), or, without a key, application default credentials (GKE
// Workload Identity and GCE through the metadata server, GOOGLE_APPLICATION_CREDENTIALS).
import { fetch } from 'undici';
import type { IdentityAuth } from '../../../model/backend-auth.js';
import { tokenDispatcher } from '../egress/egress-proxy.js';
import type { TokenSource } from './token-cache.js';

type GcpAuth = Extract<IdentityAuth, { kind: 'gcp' }>;

/** The library renews a token this close to expiry; the same margin as the gateway's own cache (token-cache.ts). */
const EAGER_REFRESH_MS = 5 * 60_000;

/** Where the library sends every JWT grant, whatever the key says (and the audience the grant must name). */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** Lifetime taken for a token issued without expires_in: Google's usual hour. */
const DEFAULT_LIFETIME_MS = 3_600_000;

/**
 * The library's HTTP calls go through undici like the rest of the gateway's, and through the egress proxy when
 * one is configured (the library works out a proxy agent for node's http client, which undici's fetch ignores).
 */
const proxiedFetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const dispatcher = tokenDispatcher();
  return fetch(input, dispatcher === undefined ? init : { ...init, dispatcher });
}) as never;

export function googleTokenSource(auth: GcpAuth): TokenSource {
  let client: Promise<{ getAccessToken(): Promise<{ token?: string | null }>; credentials: { expiry_date?: number | null } }> | undefined;
  return async (signal) => {
    client ??= (async () => {
      // Loaded on first use: a gateway without Google backends never pays for the library.
      const { GoogleAuth, JWT } = await import('google-auth-library');
      const options = { eagerRefreshThresholdMillis: EAGER_REFRESH_MS, transporterOptions: { fetchImplementation: proxiedFetch } };
      if (auth.serviceAccountKey === undefined) return new GoogleAuth({ scopes: [...auth.scopes], clientOptions: options }).getClient();
      // A service account's key: the library's JWT client (its GoogleAuth `credentials` option is deprecated).
      const key = serviceAccountKey(auth.serviceAccountKey);
      const keyId = typeof key['private_key_id'] === 'string' ? key['private_key_id'] : undefined;
      const jwt = new JWT({ ...options, email: String(key['client_email']), key: String(key['private_key']), keyId, scopes: [...auth.scopes] });
      // The library posts grants to Google's public endpoint only; a key naming another (a Private Service Connect
      // endpoint) gets its grants sent there, their audience left Google's token URL as Google requires.
      const tokenUri = key['token_uri'];
      if (typeof tokenUri === 'string' && tokenUri !== GOOGLE_TOKEN_URL)
        jwt.transporter.interceptors.request.add({
          resolved: async (o) => (String(o.url) === GOOGLE_TOKEN_URL ? { ...o, url: new URL(tokenUri) } : o),
        });
      return jwt;
    })();
    client.catch(() => {
      client = undefined;
    });
    // A fetch the cache gave up on stays the library's own single flight, which every later call would join: the
    // next fetch gets a new client instead.
    const mine = client;
    signal.addEventListener('abort', () => {
      if (client === mine) client = undefined;
    });
    const c = await client;
    const { token } = await c.getAccessToken();
    if (!token) throw new Error('the Google auth library returned no access token');
    // A token endpoint's answer without expires_in leaves the library no expiry, or (JWT) the time of the fetch, which
    // would have every request fetch again: it is taken as Google's usual hour, told to the library so that it
    // renews when the cache does.
    let expiresAt = c.credentials.expiry_date;
    if (expiresAt == null || expiresAt <= Date.now()) {
      expiresAt = Date.now() + DEFAULT_LIFETIME_MS;
      c.credentials.expiry_date = expiresAt;
    }
    return { token, expiresAt };
  };
}

/** The JSON key, parsed without quoting it in an error (JSON.parse's message shows a piece of its input). */
function serviceAccountKey(json: string): Record<string, unknown> {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new Error('the service account key is not valid JSON');
  }
}
