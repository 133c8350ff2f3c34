import { describe, expect, it } from 'vitest';
import { parseCheckArgs } from './check-options.js';

describe('parseCheckArgs', () => {
  it('reads paths in order with defaults', () => {
    expect(parseCheckArgs(['a', '-', 'b/'])).toEqual({
      kind: 'run',
      options: { paths: ['a', '-', 'b/'], output: 'table', allowWarnings: false, assumeSecrets: false },
    });
  });

  it('reads every flag, in both spellings of --output', () => {
    const want = { kind: 'run', options: { paths: ['m'], output: 'json', allowWarnings: true, assumeSecrets: true } };
    expect(parseCheckArgs(['--output=json', '--allow-warnings', '--assume-secrets', 'm'])).toEqual(want);
    expect(parseCheckArgs(['m', '-o', 'json', '--assume-secrets', '--allow-warnings'])).toEqual(want);
  });

  it('treats paths after -- as paths', () => {
    expect(parseCheckArgs(['--', '--weird-dir'])).toMatchObject({ kind: 'run', options: { paths: ['--weird-dir'] } });
  });

  it('answers help before anything else', () => {
    expect(parseCheckArgs(['--output', 'json', '-h'])).toEqual({ kind: 'help' });
  });

  it.each([
    [[], 'no PATH given (a file, a directory, or - for standard input)'],
    [['-o', 'yaml', 'm'], '--output must be table or json, not "yaml"'],
    [['--nope', 'm'], "Unknown option '--nope'"],
    [['m', '--output'], "Option '-o, --output <value>' argument missing"],
    [['-', 'm', '-'], 'standard input (-) can be read only once'],
  ])('%j is a usage error', (args, message) => {
    expect(parseCheckArgs(args)).toEqual({ kind: 'usage', message });
  });
});
