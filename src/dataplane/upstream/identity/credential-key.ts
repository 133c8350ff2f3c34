// Which backends share one run-time identity (and so one token): those with the same credential, whatever their
// base URL, headers or query. The key is a digest of the credential as compiled (kind, key material, scopes,
// tenant, region …): equal credentials give equal keys, and the key itself reveals nothing if it is ever shown.
import type { IdentityAuth } from '../../../model/backend-auth.js';
import { sha256Hex } from '../../../model/digest.js';

/** Compiled auth objects are immutable and live as long as their table: one digest each. */
const keys = new WeakMap<IdentityAuth, string>();

export function credentialKey(auth: IdentityAuth): string {
  let key = keys.get(auth);
  if (key === undefined) {
    key = sha256Hex(JSON.stringify(auth));
    keys.set(auth, key);
  }
  return key;
}
