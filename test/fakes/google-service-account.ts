// A Google service account with a real key pair, and Google's OAuth2 token endpoint faked for it on loopback (the
// process's https requests to oauth2.googleapis.com redirected there): what a `gcp` backend needs to get live access
// tokens, which a fake Vertex endpoint then checks with `valid`.
import { generateKeyPairSync } from 'node:crypto';
import { redirectHttps } from '../support/redirect-https.js';
import { selfSignedCert } from '../support/tls-cert.js';
import { type GoogleTokenServer, startGoogleTokenServer } from './google-token-server.js';

export interface GoogleServiceAccount {
  readonly email: string;
  /** The account's JSON key file, as a `gcp` backend's Secret holds it. */
  readonly keyJson: string;
  readonly tokens: GoogleTokenServer;
  /** Ends the redirect and stops the token endpoint. */
  close(): Promise<void>;
}

export async function startGoogleServiceAccount(email = 'gateway@my-project.iam.gserviceaccount.com'): Promise<GoogleServiceAccount> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = selfSignedCert(['oauth2.googleapis.com']);
  const tokens = await startGoogleTokenServer({
    tls: cert,
    serviceAccount: { email, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
  });
  const undoRedirect = redirectHttps({ 'oauth2.googleapis.com': tokens.port }, cert.cert);
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    email,
    keyJson: JSON.stringify({ type: 'service_account', client_email: email, private_key: privateKeyPem, private_key_id: 'k1' }),
    tokens,
    async close() {
      undoRedirect();
      await tokens.close();
    },
  };
}
