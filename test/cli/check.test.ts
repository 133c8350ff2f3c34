// `model-gateway check` on the fixture sets under test/fixtures/check/: its exit status, table and JSON output.
// runCheck is called in this process with its output captured (check-executable.test.ts runs the executable
// itself for what only a process shows: the exit code, real stdin, an empty stderr).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCheck } from '../../src/cli/check.js';
import type { CheckReport } from '../../src/cli/check-report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = 'test/fixtures/check';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function check(args: string[], stdin?: string): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCheck(args, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readStdin: async () => stdin ?? '',
  });
  return { code, stdout, stderr };
}

async function checkJson(args: string[], stdin?: string): Promise<{ code: number | null; report: CheckReport }> {
  const run = await check(['--output', 'json', ...args], stdin);
  return { code: run.code, report: JSON.parse(run.stdout) as CheckReport };
}

/** The table row of one object, split into its columns (cells are separated by at least two spaces). */
function row(stdout: string, kind: string, name: string): string[] | undefined {
  return stdout
    .split('\n')
    .map((l) => l.split(/ {2,}/))
    .find((cells) => cells[0] === kind && cells[1] === name);
}

const fixture = (name: string) => `${FIXTURES}/${name}`;

describe('model-gateway check', () => {
  it('fails a Secret whose data kubectl would refuse, and counts it as judged, not ignored', async () => {
    const yaml =
      'apiVersion: v1\nkind: Secret\nmetadata: {name: k}\ndata: {token: sk-plain}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: ok}\nstringData: {token: x}\n';
    const { code, report } = await checkJson(['-'], yaml);
    expect(code).toBe(1);
    expect(report.summary).toMatchObject({ objects: 1, ready: 0, notReady: 1, ignored: 0 });
    expect(report.objects[0]).toMatchObject({ key: 'Secret/default/k', reason: 'InvalidSpec' });
  });

  it('passes a clean set: every object Ready, Secrets resolved, other kinds ignored, no secret printed', async () => {
    const table = await check([fixture('clean')]);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(row(table.stdout, 'GatewayToken', 'team-a/alice')).toEqual([
      'GatewayToken',
      'team-a/alice',
      'True',
      'Ready',
      'serving',
      `${FIXTURES}/clean/access.yaml:7`,
    ]);
    // Each item of a kind: List has its own line.
    expect(row(table.stdout, 'ModelRoute', 'team-a/text-embedding-3-large')?.[5]).toBe(`${FIXTURES}/clean/routes/embeddings.yaml:11`);
    expect(table.stdout).toMatch(/^OK: 6 objects \(6 ready, 0 not ready\), 0 warnings, 0 input errors; 1 object of other kinds ignored$/m);

    const { code, report } = await checkJson([fixture('clean')]);
    expect(code).toBe(0);
    expect(Object.keys(report)).toEqual(['version', 'ok', 'summary', 'objects', 'errors']);
    expect(report).toMatchObject({ version: 1, ok: true, errors: [], summary: { objects: 6, ready: 6, notReady: 0, warnings: 0, errors: 0, ignored: 1 } });
    expect(report.objects.map((o) => o.key)).toEqual([
      'Group/team-a/developers',
      'GatewayToken/team-a/alice',
      'GatewayToken/team-a/ci-bot',
      'ModelRoute/team-a/gpt-4o-mini',
      'ModelRoute/team-a/text-embedding-3-small',
      'ModelRoute/team-a/text-embedding-3-large',
    ]);
    expect(Object.keys(report.objects[0]!)).toEqual(
      expect.arrayContaining(['key', 'kind', 'namespace', 'name', 'file', 'line', 'ready', 'reason', 'message', 'conditions', 'warnings']),
    );
    expect(report.objects[0]!.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True', 'ResolvedRefs=True', 'Ready=True']);
    for (const out of [table.stdout, JSON.stringify(report)]) {
      expect(out).not.toContain('sk-fixture');
      expect(out).not.toContain('c2stZml4dHVyZS1hbGljZS1ub3QtYS1yZWFsLWtleQ');
    }
  });

  const broken = [
    {
      fixture: 'dangling-group',
      kind: 'GatewayToken',
      name: 'default/bob',
      reason: 'GroupNotFound',
      message: 'Group "team-b" not found in namespace default',
      source: 'dangling-group/manifests.yaml:15',
    },
    {
      fixture: 'duplicate-model',
      kind: 'ModelRoute',
      name: 'default/gpt-4o-copy',
      reason: 'Conflict',
      message: 'model "gpt-4o" is already served by ModelRoute default/gpt-4o',
      source: 'duplicate-model/second.yaml:2',
    },
    {
      fixture: 'schema-violation',
      kind: 'ModelRoute',
      name: 'default/gpt-4o-mini',
      reason: 'InvalidSpec',
      message: 'spec.backends.0.baseURL (line 8): an http(s) URL such as https://api.openai.com/v1, or demo://',
      source: 'schema-violation/route.yaml:1',
    },
    {
      fixture: 'two-auth-kinds',
      kind: 'ModelRoute',
      name: 'default/claude',
      reason: 'InvalidSpec',
      message: 'spec.backends.0.auth (line 9): exactly one of bearer, header, query, none, awsSigV4, gcp, azureAD must be set',
      source: 'two-auth-kinds/route.yaml:1',
    },
    {
      fixture: 'missing-secret',
      kind: 'ModelRoute',
      name: 'default/gpt-4o-mini',
      reason: 'SecretNotFound',
      message: 'backend "openai": Secret "openai-credentials" not found in namespace default',
      source: 'missing-secret/manifests.yaml:2',
    },
    {
      fixture: 'missing-secret',
      kind: 'GatewayToken',
      name: 'default/alice',
      reason: 'SecretNotFound',
      message: 'Secret "alice-key" not found in namespace default',
      source: 'missing-secret/manifests.yaml:17',
    },
    {
      fixture: 'expired-token',
      kind: 'GatewayToken',
      name: 'default/intern',
      reason: 'Expired',
      message: 'the token expired at 2020-06-30T00:00:00Z',
      source: 'expired-token/manifests.yaml:7',
    },
  ];
  for (const b of broken) {
    it(`fails ${b.fixture}: ${b.kind} ${b.name} is ${b.reason}, in the table and in JSON`, async () => {
      const table = await check([fixture(b.fixture)]);
      expect(table.code).toBe(1);
      expect(row(table.stdout, b.kind, b.name)).toEqual([b.kind, b.name, 'False', b.reason, b.message, `${FIXTURES}/${b.source}`]);
      expect(table.stdout).toMatch(/^FAIL: /m);

      const { code, report } = await checkJson([fixture(b.fixture)]);
      expect(code).toBe(1);
      expect(report.ok).toBe(false);
      const [file, line] = b.source.split(':');
      const obj = report.objects.find((o) => o.kind === b.kind && `${o.namespace}/${o.name}` === b.name);
      expect(obj).toMatchObject({ ready: false, reason: b.reason, message: b.message, file: `${FIXTURES}/${file}`, line: Number(line) });
      expect(obj?.conditions.find((c) => c.type === 'Ready')?.status).toBe('False');
      expect(obj?.conditions.some((c) => c.status === 'False' && c.reason === b.reason)).toBe(true);
    });
  }

  it('fails a set with a YAML error, naming file and line, and still checks the other files', async () => {
    const table = await check([fixture('bad-yaml')]);
    expect(table.code).toBe(1);
    expect(table.stdout).toContain(
      `${FIXTURES}/bad-yaml/broken.yaml:7: error: Flow sequence in block collection must be sufficiently indented and end with a ]`,
    );
    expect(row(table.stdout, 'ModelRoute', 'default/gpt-4o-mini')?.[2]).toBe('True');
    expect(table.stdout).toMatch(/^FAIL: 1 object \(1 ready, 0 not ready\), 0 warnings, 1 input error$/m);

    const { code, report } = await checkJson([fixture('bad-yaml')]);
    expect(code).toBe(1);
    expect(report.errors).toEqual([
      { file: `${FIXTURES}/bad-yaml/broken.yaml`, line: 7, message: 'Flow sequence in block collection must be sufficiently indented and end with a ]' },
    ]);
    expect(report.objects.map((o) => [o.key, o.ready])).toEqual([['ModelRoute/default/gpt-4o-mini', true]]);
  });

  it('fails on warnings unless --allow-warnings', async () => {
    const strict = await check([fixture('unmatched-pattern')]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain(
      `${FIXTURES}/unmatched-pattern/manifests.yaml:9: warning: Group default/team-a: model pattern "claude-*" matches no served model`,
    );
    expect(strict.stdout).toContain(
      `${FIXTURES}/unmatched-pattern/manifests.yaml:15: warning: GatewayToken default/alice: model pattern "gpt-5*" matches no model of group "team-a"`,
    );
    expect(strict.stdout).toContain('Warnings fail the check; --allow-warnings accepts them.');

    const relaxed = await check(['--allow-warnings', fixture('unmatched-pattern')]);
    expect(relaxed.code).toBe(0);
    expect(relaxed.stdout).toMatch(/^OK: 3 objects \(3 ready, 0 not ready\), 2 warnings \(allowed\), 0 input errors$/m);

    const { code, report } = await checkJson([fixture('unmatched-pattern'), '--allow-warnings']);
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, summary: { warnings: 2, warningsAllowed: true } });
    expect(report.objects.find((o) => o.key === 'Group/default/team-a')?.warnings).toEqual(['model pattern "claude-*" matches no served model']);
  });

  it('--assume-secrets passes a set whose Secrets live elsewhere', async () => {
    const table = await check(['--assume-secrets', fixture('missing-secret')]);
    expect(table.code).toBe(0);
    expect(row(table.stdout, 'GatewayToken', 'default/alice')?.slice(2, 4)).toEqual(['True', 'Ready']);
    const { code, report } = await checkJson(['--assume-secrets', fixture('missing-secret')]);
    expect(code).toBe(0);
    expect(report.summary).toMatchObject({ objects: 3, ready: 3 });
  });

  it('reads standard input for -, named <stdin> with lines', async () => {
    const clean = ['access.yaml', 'routes/chat.yaml', 'routes/embeddings.yaml', 'secrets.yaml']
      .map((f) => readFileSync(`${ROOT}/${FIXTURES}/clean/${f}`, 'utf8'))
      .join('---\n');
    const ok = await check(['-'], clean);
    expect(ok.code).toBe(0);
    expect(row(ok.stdout, 'GatewayToken', 'team-a/alice')?.[5]).toBe('<stdin>:7');

    const dangling = await checkJson(['-'], readFileSync(`${ROOT}/${FIXTURES}/dangling-group/manifests.yaml`, 'utf8'));
    expect(dangling.code).toBe(1);
    expect(dangling.report.objects.find((o) => o.name === 'bob')).toMatchObject({ reason: 'GroupNotFound', file: '<stdin>', line: 15 });

    const bad = await check(['-'], 'apiVersion: v1\nkind: Secret\nmetadata: {name: x, name: y}\n');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('<stdin>:3: error: Map keys must be unique');
  });

  it('prints no part of a Secret value that a YAML typo sits next to, and reads past a bad alias', async () => {
    // Regressions: the parser's message quoted the line (`>sk-…`); an alias to no anchor crashed the reader.
    const key = 'sk-check-R8vW2qLs';
    const input = [
      `apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData:\n  apiKey: >${key}\n`,
      `apiVersion: v1\nkind: Secret\nmetadata: {name: b}\nstringData:\n  apiKey: *${key}\n`,
      'apiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: g}\nspec: {models: []}\n',
    ].join('---\n');
    for (const output of ['table', 'json']) {
      const run = await check(['--output', output, '-'], input);
      expect(run.code).toBe(1);
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/R8vW|2qLs|sk-check/);
      expect(run.stdout).toContain('Block scalar header includes extra characters');
      expect(run.stdout).toContain('Unresolved alias');
    }
    const table = await check(['-'], input);
    expect(table.stdout).toContain('<stdin>:5: error: Block scalar header includes extra characters');
    expect(table.stdout).toContain('<stdin>:11: error: Unresolved alias (the anchor must be set before the alias)');
  });

  it('reads a file named twice once, and reports a missing path as an input error', async () => {
    const twice = await check([fixture('clean'), `${fixture('clean')}/access.yaml`]);
    expect(twice.code).toBe(0);
    expect(twice.stdout).not.toContain('Conflict');

    const missing = await checkJson([fixture('clean'), 'does/not/exist.yaml']);
    expect(missing.code).toBe(1);
    expect(missing.report.errors).toEqual([{ file: 'does/not/exist.yaml', line: null, message: 'no such file or directory' }]);
    expect(missing.report.summary.ready).toBe(6);
  });

  it('exits 2 with a one-line message for usage errors, and prints --help', async () => {
    for (const args of [[], ['--output', 'yaml', 'x'], ['--frobnicate', 'x'], ['-', '-']]) {
      const run = await check(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')[0]).toMatch(/^model-gateway check: \S/);
      expect(run.stderr).toContain("Run 'model-gateway check --help' for usage.");
    }
    expect((await check(['--frobnicate', 'x'])).stderr.split('\n')[0]).toBe("model-gateway check: Unknown option '--frobnicate'");

    const help = await check(['--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--output table|json', '--assume-secrets', '--allow-warnings', '--help', 'Exit status:']) expect(help.stdout).toContain(flag);
  });
});
