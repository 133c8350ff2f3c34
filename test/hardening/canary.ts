// Secret hygiene: recognisable secret values ("canaries") to configure a gateway with, and one check that none of
// them, whole or in part, appears in anything the gateway lets out (log lines, metrics, answers, CLI output, status
// written to the API server). A feature that adds a secret adds a canary to secret-hygiene.test.ts and its output
// to the haystacks there.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';

/** A part of a secret this long, from anywhere in it, is enough to call it leaked (a masked key is all `*`). */
const FRAGMENT = 12;
/** Its first or last this many characters too: what a "sk-abc…wxyz" style abbreviation would show. */
const END = 8;

export interface Canary {
  readonly name: string;
  /** The secret as configured. */
  readonly value: string;
}

/** A canary: a readable prefix (so a failure says which secret leaked) and a random core (so no other text holds it). */
export function canary(name: string, prefix = `sk-canary-${name}-`): Canary {
  return { name, value: prefix + randomBytes(16).toString('hex') };
}

/** The parts of a canary that count as a leak, each with what to call it in a failure. */
function tells(c: Canary): [string, string][] {
  const out: [string, string][] = [
    [c.value.slice(0, END), `its first ${END} characters`],
    [c.value.slice(-END), `its last ${END} characters`],
  ];
  for (let i = 0; i + FRAGMENT <= c.value.length; i++) {
    const part = c.value.slice(i, i + FRAGMENT);
    // The readable prefix is shared with the test's own names; only parts that reach into the random core count.
    if (/[0-9a-f]{6}/.test(part.slice(-6))) out.push([part, `a ${FRAGMENT}-character part`]);
  }
  return out;
}

/** Every canary whose value, first or last characters, or any FRAGMENT-long part occurs in text. */
export function leaksIn(text: string, canaries: readonly Canary[]): string[] {
  const found: string[] = [];
  for (const c of canaries) {
    for (const [part, what] of tells(c)) {
      const at = text.indexOf(part);
      if (at >= 0) {
        found.push(`${c.name} (${what}): …${text.slice(Math.max(0, at - 60), at + part.length + 20)}…`);
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

/** Everything an answer carries, as one haystack: status, every header, the body. */
export async function everythingIn(r: Response): Promise<string> {
  return `${r.status}\n${[...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${await r.text()}`;
}
