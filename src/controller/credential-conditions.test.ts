import { describe, expect, it } from 'vitest';
import type { ObjectStatus } from '../compile/conditions.js';
import { withCredentialConditions } from './credential-conditions.js';

const ready = { type: 'Ready', status: 'True', reason: 'Ready', message: 'ok' } as const;
const status = (kind: string, namespace: string, name: string): ObjectStatus => ({
  ref: `${kind}/${namespace}/${name}`,
  kind,
  namespace,
  name,
  generation: 1,
  conditions: [ready],
  warnings: [],
});

describe('withCredentialConditions', () => {
  const statuses = [status('ModelRoute', 'ai', 'bedrock'), status('ModelRoute', 'ai', 'other'), status('Group', 'ai', 'bedrock')];

  it('adds CredentialsAvailable=False to the routes of failing backends only, naming each backend', () => {
    const out = withCredentialConditions(
      statuses,
      new Map([
        ['ai/bedrock/west', 'Could not load credentials from any providers'],
        ['ai/bedrock/east', 'token expired'],
      ]),
    );
    expect(out[0]!.conditions).toEqual([
      ready,
      {
        type: 'CredentialsAvailable',
        status: 'False',
        reason: 'CredentialsUnavailable',
        message: 'backend "east": token expired; backend "west": Could not load credentials from any providers',
      },
    ]);
    expect(out[1]).toBe(statuses[1]);
    expect(out[2]).toBe(statuses[2]); // a Group of the same name is not the route
  });

  it('leaves every status as it is without problems', () => {
    expect(withCredentialConditions(statuses, new Map())).toBe(statuses);
  });
});
