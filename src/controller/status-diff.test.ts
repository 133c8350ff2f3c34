import { describe, expect, it } from 'vitest';
import type { ObjectStatus } from '../compile/conditions.js';
import { desiredStatus, statusDiffers, statusPatch } from './status-diff.js';

const base = (ready: 'True' | 'False', reason = ready === 'True' ? 'Ready' : 'RefsNotResolved', generation = 3): ObjectStatus => ({
  ref: 'ModelRoute/ns/r',
  kind: 'ModelRoute',
  namespace: 'ns',
  name: 'r',
  generation,
  conditions: [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'spec is valid' },
    { type: 'Ready', status: ready, reason: reason as never, message: ready === 'True' ? 'serving' : 'Secret "k" not found in namespace ns' },
  ],
  warnings: [],
});
const t1 = new Date('2026-01-01T00:00:00.123Z');
const t2 = new Date('2026-01-02T00:00:00Z');

describe('status diff', () => {
  it('stamps observedGeneration on the status and each condition, and a whole-second lastTransitionTime', () => {
    const d = desiredStatus(base('True'), undefined, t1);
    expect(d.observedGeneration).toBe(3);
    expect(d.conditions).toEqual([
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'spec is valid', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'Ready', status: 'True', reason: 'Ready', message: 'serving', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
  });

  it('is unchanged (no write) when compile says the same thing again', () => {
    const stored = desiredStatus(base('True'), undefined, t1);
    const again = desiredStatus(base('True'), stored, t2);
    expect(statusDiffers(stored, again)).toBe(false);
  });

  it('keeps lastTransitionTime when only reason/message/generation change, moves it when status flips', () => {
    const stored = desiredStatus(base('False', 'RefsNotResolved'), undefined, t1);
    const newGen = desiredStatus(base('False', 'RefsNotResolved', 4), stored, t2);
    expect(statusDiffers(stored, newGen)).toBe(true);
    expect(newGen.conditions![1]!.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    const flipped = desiredStatus(base('True'), stored, t2);
    expect(flipped.conditions![1]!.lastTransitionTime).toBe('2026-01-02T00:00:00Z');
    expect(flipped.conditions![0]!.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
  });

  it('writes warnings as their own field and clears them with null in the merge patch', () => {
    const withWarning = desiredStatus({ ...base('True'), warnings: ['model pattern "x-*" matches no served model'] }, undefined, t1);
    expect(withWarning.warnings).toEqual(['model pattern "x-*" matches no served model']);
    const cleared = desiredStatus(base('True'), withWarning, t2);
    expect(statusDiffers(withWarning, cleared)).toBe(true);
    expect(statusPatch(cleared, '42')).toEqual({ metadata: { resourceVersion: '42' }, status: { ...cleared, warnings: null } });
  });

  it('bounds message sizes to what the CRD schema allows', () => {
    const long = {
      ...base('False'),
      conditions: [{ type: 'Ready' as const, status: 'False' as const, reason: 'InvalidSpec' as const, message: 'x'.repeat(40000) }],
    };
    expect(desiredStatus(long, undefined, t1).conditions![0]!.message.length).toBe(32768);
  });
});
