import { describe, expect, it } from 'vitest';
import { compileBackendAccess } from './backend-auth.js';

const key = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'service_account', client_email: 'sa@p.iam.gserviceaccount.com', private_key: 'PEM', ...extra });
const gcp = (json: string) =>
  compileBackendAccess({ baseURL: 'https://vertex.example/v1', auth: { gcp: { secretRef: { name: 'sa', key: 'key.json' } } } }, () => ({
    ok: true,
    value: json,
  }));

describe('compileBackendAccess: a gcp service account key', () => {
  it('accepts a key without token_uri or with an https one', () => {
    expect(gcp(key()).ok).toBe(true);
    expect(gcp(key({ token_uri: 'https://oauth2-psc.p.googleapis.com/token' })).ok).toBe(true);
  });

  it('refuses a token_uri that is not https (its signed grants would travel in the clear), without quoting it', () => {
    for (const uri of ['http://oauth2.internal/token', 'not a url', 42]) {
      const r = gcp(key({ token_uri: uri }));
      expect(r).toMatchObject({ ok: false, reason: 'InvalidSpec', message: "the gcp service account key's token_uri is not an https URL" });
    }
  });
});
