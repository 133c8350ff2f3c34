// The backend's credentials masked in everything relayed to the client, after every answer stage: a streaming
// search (stream-replace.ts) that holds back only a tail that could be the start of a credential.
import { StreamReplacer } from '../stream/stream-replace.js';
import type { BackendCredentials } from './credentials.js';

export class CredentialMask {
  readonly #replacer: StreamReplacer;

  /** A mask for these credentials; undefined when there is nothing to mask (no per-chunk work then). */
  static of(credentials: BackendCredentials): CredentialMask | undefined {
    return credentials.needles.length > 0 ? new CredentialMask(new StreamReplacer(credentials.needles)) : undefined;
  }

  private constructor(replacer: StreamReplacer) {
    this.#replacer = replacer;
  }

  /** The bytes of this chunk that can go out now, masked. */
  push(chunk: Buffer): Buffer {
    return this.#replacer.push(chunk);
  }

  /** The body ended: `held` (what the stages still held) masked, and what the mask itself held; undefined: nothing. */
  end(held: Buffer | undefined): Buffer | undefined {
    const masked = held ? this.#replacer.push(held) : undefined;
    const rest = this.#replacer.end();
    return masked && rest.length > 0 ? Buffer.concat([masked, rest]) : (masked ?? rest);
  }
}
