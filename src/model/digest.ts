// The digest client keys are known by: configured keys are hashed by compile, presented keys by auth, and only
// digests are compared or kept.
import { hash } from 'node:crypto';

/** Lowercase hex SHA-256 of a UTF-8 string. One-shot crypto.hash: no Hash object per request, as createHash() makes. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
