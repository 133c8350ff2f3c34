// Pure: the statuses of a compile + which backends could not obtain their credential at run time (awsSigV4, gcp,
// azureAD: the data plane's identities) → the statuses to write, where each ModelRoute with such a backend carries
// a CredentialsAvailable=False condition naming the backends and why (the identity library's message, secrets
// masked). The condition is absent while every backend has its credential.
import type { Condition, ObjectStatus } from '../compile/conditions.js';

/** Backend id (namespace/route/backend) → why its credential could not be had. */
export type CredentialProblems = ReadonlyMap<string, string>;

export function withCredentialConditions(statuses: readonly ObjectStatus[], problems: CredentialProblems): readonly ObjectStatus[] {
  if (problems.size === 0) return statuses;
  const byRoute = new Map<string, string[]>();
  for (const [id, problem] of problems) {
    const cut = id.lastIndexOf('/');
    const route = id.slice(0, cut);
    const list = byRoute.get(route) ?? [];
    list.push(`backend "${id.slice(cut + 1)}": ${problem}`);
    byRoute.set(route, list);
  }
  return statuses.map((s) => {
    const found = s.kind === 'ModelRoute' ? byRoute.get(`${s.namespace}/${s.name}`) : undefined;
    if (found === undefined) return s;
    const condition: Condition = { type: 'CredentialsAvailable', status: 'False', reason: 'CredentialsUnavailable', message: found.sort().join('; ') };
    return { ...s, conditions: [...s.conditions, condition] };
  });
}
