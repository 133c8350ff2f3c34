import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../compile/manifests.js';
import { takesAway } from './takes-away.js';

const full = `apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec:
  group: team-a
  secretRef: {name: alice-key, key: token}
  models: [gpt-4o-mini, text-embedding-3-small]
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key}
stringData: {token: sk-alice-0123}
`;
const objects = (text: string) => {
  const parsed = parseManifests(text, 'f.yaml');
  expect(parsed.errors).toEqual([]);
  return parsed.objects;
};

describe('takesAway', () => {
  it('is true for every prefix of the file that parses (what a reader sees while it is written)', () => {
    const last = objects(full);
    let parsedPrefixes = 0;
    for (let cut = 0; cut < full.trimEnd().length; cut++) {
      const prefix = parseManifests(full.slice(0, cut), 'f.yaml');
      if (prefix.errors.length > 0) continue; // a broken version keeps the last good objects anyway
      parsedPrefixes++;
      expect(takesAway(last, prefix.objects), JSON.stringify(full.slice(0, cut))).toBe(true);
    }
    expect(parsedPrefixes).toBeGreaterThan(40);
    expect(takesAway(last, objects(full))).toBe(false);
  });

  it('is false for versions that only add or change things', () => {
    const last = objects(full);
    expect(takesAway(last, objects(full.replace('team-a', 'team-b')))).toBe(false);
    expect(takesAway(last, objects(full.replace('sk-alice-0123', 'sk-alice-0124')))).toBe(false);
    expect(takesAway(last, objects(full.replace('text-embedding-3-small]', 'text-embedding-3-small, o3]')))).toBe(false);
    expect(takesAway(last, objects(`${full}---\napiVersion: v1\nkind: Secret\nmetadata: {name: more}\n`))).toBe(false);
    expect(takesAway(last, objects(full.split('---\n').reverse().join('---\n')))).toBe(false); // moved around
  });

  it('is true for an object, a field, a list item or the end of a value taken away', () => {
    const last = objects(full);
    expect(takesAway(last, objects(full.split('---\n')[0]!))).toBe(true);
    expect(takesAway(last, objects(full.replace('name: alice}', 'name: bob}')))).toBe(true); // renamed: alice is gone
    expect(takesAway(last, objects(full.replace('  group: team-a\n', '')))).toBe(true);
    expect(takesAway(last, objects(full.replace(', text-embedding-3-small]', ']')))).toBe(true);
    expect(takesAway(last, objects(full.replace('sk-alice-0123', 'sk-alice-01')))).toBe(true);
    expect(takesAway(last, [])).toBe(true);
    expect(takesAway([], [])).toBe(false);
  });
});
