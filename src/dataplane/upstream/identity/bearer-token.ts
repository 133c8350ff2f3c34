// An identity whose credential is an access token sent as Bearer (Google, Microsoft Entra): the token comes from
// its library through the cache that renews it ahead of expiry (token-cache.ts).
import type { AddedSecret, Identity, SignableRequest } from './signed-request.js';
import { TokenCache, type TokenCacheOptions, type TokenSource } from './token-cache.js';

export class BearerTokenIdentity implements Identity {
  readonly #cache: TokenCache;

  constructor(source: TokenSource, options?: TokenCacheOptions) {
    this.#cache = new TokenCache(source, options);
  }

  async warm(): Promise<void> {
    await this.#cache.get();
  }

  async authorize(req: SignableRequest): Promise<readonly AddedSecret[]> {
    const { token } = await this.#cache.get();
    const value = `Bearer ${token}`;
    req.headers['authorization'] = value;
    return [{ header: 'authorization', value, secret: token }];
  }
}
