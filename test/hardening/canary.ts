// Secret hygiene: recognisable secret values ("canaries") to configure a gateway with, and one check that none of
// them, whole or in part, appears in anything the gateway lets out (log lines, metrics, answers, CLI output, status
// written to the API server). A feature that adds a secret adds a canary here and its output to the haystacks.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';

/** A part of a secret this long is enough to call it leaked (a masked key is all `*`, so it has none). */
const FRAGMENT = 12;

export interface Canary {
  readonly name: string;
  /** The secret as configured. */
  readonly value: string;
}

/** A canary: a readable prefix (so a failure says which secret leaked) and a random core (so no other text holds it). */
export function canary(name: string, prefix = `sk-canary-${name}-`): Canary {
  return { name, value: prefix + randomBytes(16).toString('hex') };
}

/** Every canary whose value, or any FRAGMENT-long part of it, occurs in text. */
export function leaksIn(text: string, canaries: readonly Canary[]): string[] {
  const found: string[] = [];
  for (const c of canaries) {
    for (let i = 0; i + FRAGMENT <= c.value.length; i++) {
      const part = c.value.slice(i, i + FRAGMENT);
      // The readable prefix is shared with the test's own names; only parts that reach into the random core count.
      if (!/[0-9a-f]{6}/.test(part.slice(-6))) continue;
      const at = text.indexOf(part);
      if (at >= 0) {
        found.push(`${c.name}: …${text.slice(Math.max(0, at - 60), at + FRAGMENT + 20)}…`);
        break;
      }
    }
  }
  return found;
}

/** Asserts that no canary leaked into any of the named outputs. */
export function expectNoLeaks(haystacks: Readonly<Record<string, string>>, canaries: readonly Canary[]): void {
  const leaks = Object.entries(haystacks).flatMap(([where, text]) => leaksIn(text, canaries).map((l) => `${where}: ${l}`));
  expect(leaks).toEqual([]);
}
