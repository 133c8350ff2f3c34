// No module the gateway loads may turn a built-in prototype into a dictionary: once any other object has
// String.prototype as its prototype (ioredis 6's `class VerbatimString extends String` did), V8 keeps
// String.prototype as a dictionary and every `charCodeAt` in the process runs slower, the OpenTelemetry serializer's
// among them (bench/results/2026-11-27-night-string-prototype.md). Checked with V8's own %HasFastProperties in a node
// process that imports every built module of the gateway.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliEntry } from '../support/spawn-cli.js';

const PROTOTYPES = 'Object Function Array String Number Boolean Symbol Promise Map Set Error RegExp Date ArrayBuffer Uint8Array Buffer'.split(' ');

/** Imports `modules` in a node process, then names the built-in prototypes that are dictionaries. */
function dictionaryPrototypes(modules: string[]): string[] {
  const script = `
    for (const m of ${JSON.stringify(modules)}) await import(m);
    const fast = new Function('o', 'return %HasFastProperties(o)');
    const slow = ${JSON.stringify(PROTOTYPES)}.filter((n) => !fast(globalThis[n].prototype));
    if (!fast(Object.getPrototypeOf(Uint8Array.prototype))) slow.push('TypedArray');
    console.log(JSON.stringify(slow));`;
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as string[];
}

/** Every module of the build but the entry point (which starts serving when imported). */
function builtModules(): string[] {
  const dist = dirname(cliEntry());
  return readdirSync(dist, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.js') && f !== 'cli.js')
    .map((f) => pathToFileURL(join(dist, f)).href);
}

describe('built-in prototypes', () => {
  it('stay fast after every module of the gateway is loaded', () => {
    const modules = builtModules();
    expect(modules.length).toBeGreaterThan(100);
    expect(dictionaryPrototypes(modules)).toEqual([]);
  }, 60_000);

  it('the check sees an object made with String.prototype as its prototype', () => {
    const poison = `data:text/javascript,${encodeURIComponent('Object.create(String.prototype);')}`;
    expect(dictionaryPrototypes([poison])).toEqual(['String']);
  }, 60_000);
});
