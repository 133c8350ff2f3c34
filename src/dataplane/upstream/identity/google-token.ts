// gcp: a Google OAuth2 access token (Vertex AI), from Google's maintained auth library: a service account's JSON key
// (signed JWT exchanged at Google's token endpoint), or, without a key, application default credentials (GKE
// Workload Identity and GCE through the metadata server, GOOGLE_APPLICATION_CREDENTIALS).
import { fetch } from 'undici';
import type { IdentityAuth } from '../../../model/backend-auth.js';
import type { IssuedToken } from './token-cache.js';

type GcpAuth = Extract<IdentityAuth, { kind: 'gcp' }>;

/** The library renews a token this close to expiry; the same margin as the gateway's own cache (token-cache.ts). */
const EAGER_REFRESH_MS = 5 * 60_000;

export function googleTokenSource(auth: GcpAuth): () => Promise<IssuedToken> {
  let client: Promise<{ getAccessToken(): Promise<{ token?: string | null }>; credentials: { expiry_date?: number | null } }> | undefined;
  return async () => {
    client ??= (async () => {
      // Loaded on first use: a gateway without Google backends never pays for the library.
      const { GoogleAuth, JWT } = await import('google-auth-library');
      // Its HTTP calls go through undici like the rest of the gateway's.
      const options = { eagerRefreshThresholdMillis: EAGER_REFRESH_MS, transporterOptions: { fetchImplementation: fetch as never } };
      if (auth.serviceAccountKey === undefined) return new GoogleAuth({ scopes: [...auth.scopes], clientOptions: options }).getClient();
      // A service account's key: the library's JWT client (its GoogleAuth `credentials` option is deprecated).
      const key = serviceAccountKey(auth.serviceAccountKey);
      const keyId = typeof key['private_key_id'] === 'string' ? key['private_key_id'] : undefined;
      return new JWT({ ...options, email: String(key['client_email']), key: String(key['private_key']), keyId, scopes: [...auth.scopes] });
    })();
    client.catch(() => {
      client = undefined;
    });
    const c = await client;
    const { token } = await c.getAccessToken();
    if (!token) throw new Error('the Google auth library returned no access token');
    // Metadata-server and JWT clients both set expiry_date; a missing one is treated as Google's usual hour.
    return { token, expiresAt: c.credentials.expiry_date ?? Date.now() + 3_600_000 };
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
