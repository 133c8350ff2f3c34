import { describe, expect, it } from 'vitest';
import type { ObjectStatus } from '../compile/conditions.js';
import { desiredStatus } from './status-diff.js';
import { StatusWriter } from './status-writer.js';
import type { KubeObject } from '../sources/kubernetes/kube-object.js';

const status = (message: string): ObjectStatus => ({
  ref: 'GatewayToken/ns/t',
  kind: 'GatewayToken',
  namespace: 'ns',
  name: 't',
  generation: 1,
  conditions: [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'spec is valid' },
    { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message },
    { type: 'Ready', status: 'True', reason: 'Ready', message: 'serving' },
  ],
  warnings: [],
});

describe('StatusWriter.update', () => {
  it('compares an unchanged (status, object) pair once, and again when either is replaced', () => {
    const s = status('group "g", 1 model(s)');
    // Counts how often the stored status is read, i.e. compared with a desired one.
    let compared = 0;
    const stored = (st: ObjectStatus): KubeObject => {
      const value = desiredStatus(st, undefined, new Date());
      return Object.defineProperty({ metadata: { name: 't', namespace: 'ns', generation: 1, resourceVersion: '5' } }, 'status', {
        get: () => (compared++, value),
        enumerable: true,
      });
    };
    let object = stored(s);
    const patches: unknown[] = [];
    const writer = new StatusWriter({
      api: { patchStatus: async (...a) => patches.push(a), get: async () => object },
      lookup: () => object,
      isLeader: () => false,
    });
    writer.update([s]);
    const once = compared;
    expect(once).toBeGreaterThan(0);
    writer.update([s]);
    expect(compared).toBe(once);
    expect(writer.pending).toBe(0);
    writer.update([status('group "g", 1 model(s)')]); // an equal status from a new compile result: compared again
    expect(compared).toBe(2 * once);
    expect(writer.pending).toBe(0);
    object = stored(s); // the cached object was replaced (a new resourceVersion)
    writer.update([s]);
    expect(compared).toBe(3 * once);
    writer.update([status('group "g", 2 model(s)')]); // a real difference is queued
    expect(writer.pending).toBe(1);
    const queued = compared;
    writer.update([status('group "g", 2 model(s)')]); // a queued object is not compared until its write
    expect(compared).toBe(queued);
    expect(patches).toEqual([]); // not the leader
  });
});
