import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdSealer, MAX_SEALED_ID_CHARS, type SealedRef } from './sealed-id.js';

const k1 = randomBytes(32);
const k2 = randomBytes(48);
const ref: SealedRef = {
  kind: 'video',
  upstreamId: 'video_68d7512d07848190b3e45da0ecbebcde004da08e1e0678d5',
  model: 'sora-2',
  backend: 'openai',
  owner: 'team-a/alice',
};

/** Replaces the character at i with a different base64url character. */
function flipChar(id: string, i: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const c = id[i]!;
  const next = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length]!;
  return id.slice(0, i) + next + id.slice(i + 1);
}

describe('IdSealer', () => {
  it('round-trips and keeps the familiar, URL-safe prefix', () => {
    const s = new IdSealer([k1]);
    const id = s.seal(ref);
    expect(id).toMatch(/^video_[A-Za-z0-9_-]+$/);
    expect(encodeURIComponent(id)).toBe(id);
    expect(s.unseal('video', id)).toEqual(ref);
    const resp = s.seal({ ...ref, kind: 'response', upstreamId: 'resp_abc' });
    expect(resp.startsWith('resp_')).toBe(true);
    expect(s.unseal('response', resp)).toEqual({ ...ref, kind: 'response', upstreamId: 'resp_abc' });
  });

  it("carries a background response's create record, under the MAC; an id without it reads as before", () => {
    const s = new IdSealer([k1]);
    const bg: SealedRef = { ...ref, kind: 'response', upstreamId: 'resp_0123abcd', background: { inputTokens: 1234, reqId: 'req-7f3a' } };
    const id = s.seal(bg);
    expect(s.unseal('response', id)).toEqual(bg);
    const plain = s.seal({ ...bg, background: undefined });
    expect(s.unseal('response', plain)?.background).toBeUndefined();
    expect(id.length).toBeGreaterThan(plain.length);
    // The record is authenticated like the rest: no character of it can change unnoticed.
    for (let i = 'resp_'.length; i < id.length; i++) expect(s.unseal('response', flipChar(id, i))).toBeUndefined();
  });

  it('is deterministic (a stream repeats the same id in every event)', () => {
    const s = new IdSealer([k1]);
    expect(s.seal(ref)).toBe(s.seal(ref));
  });

  it('keeps upstream ids that lack the prefix, odd characters included', () => {
    const s = new IdSealer([k1]);
    const odd = { ...ref, upstreamId: 'task-42/ü', owner: 'ns/tök' };
    expect(s.unseal('video', s.seal(odd))).toEqual(odd);
    const exact = { ...ref, upstreamId: 'video_' };
    expect(s.unseal('video', s.seal(exact))).toEqual(exact);
  });

  it('is compact: a real OpenAI-looking video id stays under 120 characters', () => {
    const id = new IdSealer([k1]).seal(ref);
    expect(id.length).toBeLessThan(120);
  });

  it('rejects any changed character', () => {
    const s = new IdSealer([k1]);
    const id = s.seal(ref);
    for (let i = 0; i < id.length; i++) expect(s.unseal('video', flipChar(id, i)), `position ${i}`).toBeUndefined();
  });

  it('rejects any changed bit of the decoded bytes', () => {
    const s = new IdSealer([k1]);
    const raw = Buffer.from(s.seal(ref).slice('video_'.length), 'base64url');
    for (let i = 0; i < raw.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const copy = Buffer.from(raw);
        copy[i]! ^= 1 << bit;
        expect(s.unseal('video', `video_${copy.toString('base64url')}`)).toBeUndefined();
      }
    }
  });

  it('rejects truncation, extension, non-canonical and foreign strings', () => {
    const s = new IdSealer([k1]);
    const id = s.seal(ref);
    expect(s.unseal('video', id.slice(0, -1))).toBeUndefined();
    expect(s.unseal('video', `${id}A`)).toBeUndefined();
    expect(s.unseal('video', `${id}=`)).toBeUndefined();
    expect(s.unseal('video', id.replace('video_', 'video_ '))).toBeUndefined();
    expect(s.unseal('video', ref.upstreamId)).toBeUndefined();
    expect(s.unseal('video', '')).toBeUndefined();
    expect(s.unseal('video', `video_${'A'.repeat(MAX_SEALED_ID_CHARS)}`)).toBeUndefined();
  });

  it('binds the kind: a video id is not a response id, even with the prefix swapped', () => {
    const s = new IdSealer([k1]);
    const id = s.seal(ref);
    expect(s.unseal('response', id)).toBeUndefined();
    expect(s.unseal('response', `resp_${id.slice('video_'.length)}`)).toBeUndefined();
  });

  it('rejects ids sealed with another key', () => {
    const id = new IdSealer([k2]).seal(ref);
    expect(new IdSealer([k1]).unseal('video', id)).toBeUndefined();
  });

  it('rotation: new ids use the first key, every listed key verifies', () => {
    const old = new IdSealer([k1]).seal(ref);
    const rotated = new IdSealer([k2, k1]);
    expect(rotated.unseal('video', old)).toEqual(ref);
    const fresh = rotated.seal(ref);
    expect(fresh).not.toBe(old);
    expect(new IdSealer([k2]).unseal('video', fresh)).toEqual(ref);
    expect(new IdSealer([k1]).unseal('video', fresh)).toBeUndefined();
    // Once the old key is dropped, its ids stop verifying.
    expect(new IdSealer([k2]).unseal('video', old)).toBeUndefined();
  });

  it('refuses short keys and an empty key list', () => {
    expect(() => new IdSealer([])).toThrow();
    expect(() => new IdSealer([randomBytes(31)])).toThrow(/32 bytes/);
  });
});

describe('IdSealer compaction', () => {
  it('stores hex upstream ids as bytes and restores them exactly', () => {
    const s = new IdSealer([k1]);
    for (const upstreamId of ['video_abcdef01', 'video_ABCDEF01', 'video_abc', 'resp_00', 'deadbeef', 'video_0']) {
      const r = { ...ref, upstreamId };
      expect(s.unseal('video', s.seal(r))).toEqual(r);
    }
  });
});
