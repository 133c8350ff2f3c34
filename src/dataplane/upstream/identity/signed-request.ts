// What an identity sees of an upstream request before it is sent, and may change: the signature or the token
// goes into its headers (and a signature covers the path, the headers and the body as they will be sent).
export interface SignableRequest {
  readonly method: string;
  /** scheme://host[:port] of the backend. */
  readonly origin: string;
  /** Path on the origin, with the query string (already encoded as it goes on the wire). */
  path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer | null;
}

/** A header the identity added that carries a secret (a token): masked in everything relayed from the backend. */
export interface AddedSecret {
  readonly header: string;
  readonly value: string;
  readonly secret: string;
}

/** How a backend obtains its credential at run time. */
export interface Identity {
  /** Adds the credential to the request; returns the secrets it added (for masking). Rejects when none can be had. */
  authorize(req: SignableRequest): Promise<readonly AddedSecret[]>;
  /** Fetches ahead of the first request, so that it does not wait and a failure shows before traffic does. */
  warm(): Promise<void>;
}
