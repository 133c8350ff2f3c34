// Ownership (pure): turns a sealed id presented by a caller into the route and backend to send the follow-up
// to, or undefined when the caller must get 404 not_found. One answer for every failure (forged, tampered,
// another token's, model no longer in the token's group, route or backend gone), so a response never reveals
// that an id exists.
import type { Family } from '../../model/families.js';
import type { CompiledBackend, CompiledRoute, CompiledToken, RoutingTable } from '../../model/routing-table.js';
import type { IdSealer, SealedKind, SealedRef } from './sealed-id.js';

export interface OwnedObject {
  readonly ref: SealedRef;
  readonly route: CompiledRoute;
  readonly backend: CompiledBackend;
}

const FAMILY_OF: Readonly<Record<SealedKind, Family>> = { video: 'videos', response: 'responses' };

export function resolveOwned(table: RoutingTable, token: CompiledToken, sealer: IdSealer, kind: SealedKind, id: string): OwnedObject | undefined {
  const ref = sealer.unseal(kind, id);
  if (!ref) return undefined;
  // Ownership is the GatewayToken object (namespace/name): rotating its key keeps access, a different token never has it.
  if (ref.owner !== token.ref) return undefined;
  // The token's current group (narrowed by its own list) must still allow the model the object was made with.
  if (!token.modelSet.has(ref.model)) return undefined;
  const route = table.routes.get(ref.model);
  if (!route?.families.has(FAMILY_OF[kind])) return undefined;
  const backend = route.backends.find((b) => b.name === ref.backend);
  if (!backend) return undefined;
  return { ref, route, backend };
}

/**
 * The backend a new Responses request continuing `previous` must go to, given the route its `model` names.
 * Stored responses live in one upstream account: the same backend when the model is unchanged; on a
 * different model, a backend of that route that reaches the same upstream with the same credential. None
 * means the conversation cannot continue on that model.
 */
export function continuationBackend(previous: OwnedObject, route: CompiledRoute): CompiledBackend | undefined {
  if (route.ref === previous.route.ref) return previous.backend;
  const want = previous.backend;
  return route.backends.find((b) => b.account === want.account);
}
