// The run-time identities of the table's backends (awsSigV4, gcp, azureAD), one per credential (backends with the
// same credential share tokens, whatever their base URL, headers or query: credential-key.ts), kept across table swaps so that a recompile does not throw tokens away. It
// records whether each could obtain its credential, for the route's status condition and the logs: a failure is
// described by the library's message with the backend's secrets masked, never by a value.
import type { CompiledBackend, RoutingTable } from '../../../model/routing-table.js';
import { AUTH_LABEL, type IdentityAuth, isIdentityAuth } from '../../../model/backend-auth.js';
import type { Logger } from '../../../observability/logger.js';
import { CREDENTIALS_CODE } from '../../policy/retry-policy.js';
import { AwsSigV4Identity } from './aws-sigv4.js';
import { azureTokenSource } from './azure-token.js';
import { BearerTokenIdentity } from './bearer-token.js';
import { credentialKey } from './credential-key.js';
import { googleTokenSource } from './google-token.js';
import type { AddedSecret, Identity, SignableRequest } from './signed-request.js';
import type { TokenCacheOptions } from './token-cache.js';

class CredentialsUnavailable extends Error {
  readonly code = CREDENTIALS_CODE;
}

interface Entry {
  /** The credential's key (credential-key.ts). */
  readonly key: string;
  readonly identity: Identity;
  readonly auth: IdentityAuth;
  /** Backend ids (namespace/route/backend) using it in the current table. */
  backends: readonly string[];
  /** Why the last try failed (masked); undefined after a success or before any try. */
  problem: string | undefined;
}

export interface IdentitiesOptions {
  readonly logger?: Logger;
  /** Token renewal margins (tests shorten them). */
  readonly tokens?: TokenCacheOptions;
}

/** Most characters of a library's error message kept in a status condition or a log line. */
const MAX_PROBLEM_CHARS = 300;

export class Identities {
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<() => void>();
  readonly #o: IdentitiesOptions;

  constructor(o: IdentitiesOptions = {}) {
    this.#o = o;
  }

  /** Adds the backend's credential to the request; rejects with CredentialsUnavailable when it cannot be had. */
  async authorize(backend: CompiledBackend, req: SignableRequest): Promise<readonly AddedSecret[]> {
    const entry = this.#entry(backend);
    try {
      const added = await entry.identity.authorize(req);
      this.#settle(entry, undefined);
      return added;
    } catch (err) {
      this.#settle(entry, describeFailure(err, entry.auth));
      throw new CredentialsUnavailable(`backend "${backend.name}" could not obtain ${AUTH_LABEL[backend.auth.kind]}`);
    }
  }

  /** Keeps the identities the table uses (new ones start fetching at once) and forgets the rest. */
  retain(table: RoutingTable): void {
    const used = new Map<string, { backend: CompiledBackend; ids: string[] }>();
    for (const route of table.routes.values())
      for (const b of route.backends) {
        if (!isIdentityAuth(b.auth)) continue;
        const key = credentialKey(b.auth);
        const u = used.get(key);
        if (u) u.ids.push(b.id);
        else used.set(key, { backend: b, ids: [b.id] });
      }
    let changed = false;
    for (const [key, entry] of this.#entries)
      if (!used.has(key)) {
        this.#entries.delete(key);
        if (entry.problem !== undefined) changed = true; // its routes' conditions go
      }
    for (const [key, u] of used) {
      const had = this.#entries.get(key);
      if (had) {
        if (had.problem !== undefined && had.backends.join() !== u.ids.join()) changed = true;
        had.backends = u.ids;
        continue;
      }
      const entry = this.#entry(u.backend);
      entry.backends = u.ids;
      entry.identity.warm().then(
        () => this.#settle(entry, undefined),
        (err: unknown) => this.#settle(entry, describeFailure(err, entry.auth)),
      );
    }
    if (changed) this.#notify();
  }

  /** Backend id → why its credential could not be had, for every backend whose last try failed. */
  problems(): ReadonlyMap<string, string> {
    const out = new Map<string, string>();
    for (const e of this.#entries.values()) if (e.problem !== undefined) for (const id of e.backends) out.set(id, e.problem);
    return out;
  }

  /** Told when problems() changes. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #entry(backend: CompiledBackend): Entry {
    const auth = backend.auth;
    if (!isIdentityAuth(auth)) throw new Error(`backend ${backend.id} has no run-time identity`);
    const key = credentialKey(auth);
    let e = this.#entries.get(key);
    if (e === undefined) {
      e = { key, identity: identityOf(auth, this.#o.tokens), auth, backends: [backend.id], problem: undefined };
      this.#entries.set(key, e);
    }
    return e;
  }

  #settle(entry: Entry, problem: string | undefined): void {
    if (entry.problem === problem) return;
    const was = entry.problem;
    entry.problem = problem;
    if (this.#entries.get(entry.key) !== entry) return; // retired meanwhile: nobody asks about it any more
    if (problem !== undefined) this.#o.logger?.warn({ backends: entry.backends, auth: entry.auth.kind, problem }, 'a backend could not obtain its credential');
    else if (was !== undefined) this.#o.logger?.info({ backends: entry.backends, auth: entry.auth.kind }, 'a backend obtained its credential again');
    this.#notify();
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }
}

function identityOf(auth: IdentityAuth, tokens: TokenCacheOptions | undefined): Identity {
  switch (auth.kind) {
    case 'awsSigV4':
      return new AwsSigV4Identity(auth);
    case 'gcp':
      return new BearerTokenIdentity(googleTokenSource(auth), tokens);
    case 'azureAD':
      return new BearerTokenIdentity(azureTokenSource(auth), tokens);
  }
}

/** The library's message, first line, with the backend's own secrets masked (a message never quotes one, but if it did). */
function describeFailure(err: unknown, auth: IdentityAuth): string {
  let text = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim() || 'unknown error';
  for (const s of secretsOf(auth)) if (s.length > 0) text = text.replaceAll(s, '*'.repeat(s.length));
  return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS)}…` : text;
}

function secretsOf(auth: IdentityAuth): string[] {
  switch (auth.kind) {
    case 'awsSigV4':
      return auth.keys ? [auth.keys.secretAccessKey, auth.keys.sessionToken ?? ''] : [];
    case 'gcp':
      return auth.serviceAccountKey ? privateKeyLines(auth.serviceAccountKey) : [];
    case 'azureAD':
      return auth.clientSecret ? [auth.clientSecret] : [];
  }
}

/** The private key of a service account's JSON key, line by line (the form a PEM would be quoted in). */
function privateKeyLines(json: string): string[] {
  try {
    const key = (JSON.parse(json) as { private_key?: unknown }).private_key;
    return typeof key === 'string' ? key.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----')) : [];
  } catch {
    return [];
  }
}
