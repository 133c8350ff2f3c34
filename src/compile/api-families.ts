// Which families a backend's API can serve, natively or by the gateway's translation, for the route status's
// warnings: an `api: anthropic` backend serves the Messages API, and chat completions and the Responses API
// (translated), nothing else. Pure.
import type { Family } from '../model/families.js';

const ANTHROPIC_SERVES: ReadonlySet<Family> = new Set<Family>(['messages', 'chat.completions', 'responses']);

/** A warning for a backend that can serve none of these listed families; [] otherwise. */
export function unservedFamilies(backend: string, api: string | undefined, listed: readonly Family[] | undefined): string[] {
  if (api !== 'anthropic' || !listed) return [];
  const unserved = listed.filter((f) => !ANTHROPIC_SERVES.has(f));
  if (unserved.length === 0) return [];
  return [
    `backend "${backend}": api: anthropic serves only messages, and chat.completions and responses (translated), not ${unserved.join(', ')}; those requests fail over to the route's other backends, or fail`,
  ];
}
