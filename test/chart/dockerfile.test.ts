// Sanity of the image recipe, read by parsing the Dockerfile (no Docker engine here): multi-stage with a dev-deps
// build and production-only runtime dependencies, pinned bases (no latest), non-root USER, no shell needed at run
// time, exec-form ENTRYPOINT running `serve`, OCI labels, and a .dockerignore that lets in exactly what is COPYed.
import { describe, expect, it } from 'vitest';
import { read, readYamlDocuments } from './repo.js';
import { GATEWAY_IMAGE_ENV, GATEWAY_NODE_FLAGS } from '../../bench/lib/targets.js';

interface Instruction {
  op: string;
  args: string;
  line: number;
}
interface Stage {
  base: string;
  name?: string;
  body: Instruction[];
}

function instructions(src: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = src.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let text = lines[i]!.trim();
    if (text === '' || text.startsWith('#')) continue;
    while (text.endsWith('\\') && i + 1 < lines.length) {
      i++;
      const next = lines[i]!.trim();
      if (!next.startsWith('#')) text = `${text.slice(0, -1).trimEnd()} ${next}`;
    }
    const m = /^(\S+)\s*([\s\S]*)$/.exec(text)!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!, line: start + 1 });
  }
  return out;
}

function stages(list: Instruction[]): { globalArgs: Map<string, string>; stages: Stage[] } {
  const globalArgs = new Map<string, string>();
  const result: Stage[] = [];
  for (const ins of list) {
    if (ins.op === 'FROM') {
      const [rawBase, as, name] = ins.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      const base = rawBase!.replace(/\$\{?(\w+)\}?/g, (_, v: string) => globalArgs.get(v) ?? `<unset ${v}>`);
      result.push({ base, ...(as?.toUpperCase() === 'AS' ? { name } : {}), body: [] });
    } else if (result.length === 0) {
      if (ins.op === 'ARG') {
        const [k, v] = ins.args.split('=');
        globalArgs.set(k!, v ?? '');
      }
    } else result.at(-1)!.body.push(ins);
  }
  return { globalArgs, stages: result };
}

const dockerfile = read('Dockerfile');
const all = instructions(dockerfile);
const { stages: list } = stages(all);
const names = new Set(list.map((s) => s.name).filter(Boolean));
const runtime = list.at(-1)!;
const ops = (s: Stage, op: string) => s.body.filter((i) => i.op === op);

describe('Dockerfile', () => {
  it('is multi-stage: a build stage with dev dependencies running npm run build', () => {
    expect(list.length).toBeGreaterThanOrEqual(2);
    const build = list.find((s) => ops(s, 'RUN').some((r) => /\bnpm run build\b/.test(r.args)))!;
    expect(build).toBeDefined();
    const installs = ops(build, 'RUN').filter((r) => /\bnpm ci\b/.test(r.args));
    expect(installs.length).toBe(1);
    expect(installs[0]!.args).not.toMatch(/--omit=dev|--production|--only=prod/);
  });

  it('runtime node_modules come from a production-only install, dist from the build stage', () => {
    const copyFrom = ops(runtime, 'COPY')
      .map((c) => /--from=(\S+)\s+(\S+)/.exec(c.args))
      .filter((m) => m !== null);
    const modules = copyFrom.find((m) => m![2]!.endsWith('node_modules'));
    const dist = copyFrom.find((m) => m![2]!.endsWith('/dist'));
    expect(modules && dist).toBeTruthy();
    const depsStage = list.find((s) => s.name === modules![1])!;
    expect(ops(depsStage, 'RUN').some((r) => /\bnpm ci\b.*--omit=dev/.test(r.args))).toBe(true);
    const buildStage = list.find((s) => s.name === dist![1])!;
    expect(ops(buildStage, 'RUN').some((r) => /\bnpm run build\b/.test(r.args))).toBe(true);
    // "type": "module" lives in package.json: without it Node would load dist/*.js as CommonJS.
    expect(ops(runtime, 'COPY').some((c) => /^package\.json\s/.test(c.args))).toBe(true);
  });

  it('pins every base image to Node 24 with a tag or digest, never latest', () => {
    for (const s of list) {
      if (names.has(s.base)) continue; // FROM an earlier stage
      expect(s.base, `FROM ${s.base}`).toMatch(/^[^:@\s]+(:[^\s@]+|@sha256:[a-f0-9]{64})$/);
      expect(s.base).not.toMatch(/:latest$/);
      expect(s.base).toMatch(/(^|\/)node:24[-.\w]*|distroless\/nodejs24-/);
    }
    expect(runtime.base).toMatch(/^gcr\.io\/distroless\/nodejs24-debian12(:nonroot)?/);
  });

  it('runs as a non-root user and needs no shell in the runtime stage', () => {
    const users = ops(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.args.split(':')[0]!;
    expect(user).not.toMatch(/^(root|0)$/);
    expect(ops(runtime, 'RUN')).toEqual([]);
    for (const op of ['CMD', 'ENTRYPOINT', 'HEALTHCHECK']) {
      for (const i of ops(runtime, op)) expect(i.args.replace(/^(--\S+\s+)*(CMD\s+)?/, ''), `${op} exec form`).toMatch(/^\[/);
    }
  });

  it('ENTRYPOINT is exec form: node runs dist/cli.js serve as PID 1 and gets SIGTERM itself', () => {
    const entry = ops(runtime, 'ENTRYPOINT');
    expect(entry.length).toBe(1);
    const argv = JSON.parse(entry[0]!.args) as string[];
    expect(argv[0]).toMatch(/(^|\/)node$/);
    // Node's own flag comes first (gc, for the memory release after compiles), then the gateway; the bin's shebang
    // passes the same flags.
    expect(argv.slice(1)).toEqual(['--expose-gc', 'dist/cli.js', 'serve']);
    const shebang = read('src/cli.ts').split('\n')[0]!;
    expect(shebang).toBe(`#!/usr/bin/env -S node ${argv.slice(1, -2).join(' ')}`);
    expect(ops(runtime, 'CMD')).toEqual([]);
  });

  it('the benchmark starts its gateway as the image does: the same node flags and the same environment', () => {
    const argv = JSON.parse(ops(runtime, 'ENTRYPOINT')[0]!.args) as string[];
    expect(argv.slice(1, -2)).toEqual(GATEWAY_NODE_FLAGS);
    const env = Object.fromEntries(ops(runtime, 'ENV').map((i) => i.args.split('=') as [string, string]));
    expect(env).toEqual({ NODE_ENV: 'production', ...GATEWAY_IMAGE_ENV });
  });

  it("the chart's young-generation setting repeats the entry point with the one flag added, and only when set", () => {
    const argv = JSON.parse(ops(runtime, 'ENTRYPOINT')[0]!.args) as string[];
    const container = (file: string) =>
      (readYamlDocuments(file) as any[]).find((d) => d?.kind === 'Deployment').spec.template.spec.containers.find((c: any) => c.name === 'gateway');
    // ci/full-values.yaml sets gateway.youngGenerationSemiSpaceMB: 16; the defaults leave the image's entry point alone.
    expect(container('test/chart/rendered/full.yaml').command).toEqual([...argv.slice(0, -2), '--max-semi-space-size=16', ...argv.slice(-2)]);
    expect(container('test/chart/rendered/default.yaml').command).toBeUndefined();
  });

  it('exposes the API and metrics ports and carries OCI labels', () => {
    expect(
      ops(runtime, 'EXPOSE')
        .flatMap((e) => e.args.split(/\s+/))
        .sort(),
    ).toEqual(['8080', '9090']);
    const labels = ops(runtime, 'LABEL')
      .map((l) => l.args)
      .join(' ');
    for (const key of ['title', 'description', 'version', 'revision', 'created', 'licenses']) expect(labels).toContain(`org.opencontainers.image.${key}=`);
  });

  it('.dockerignore ignores everything except what the build stages COPY from the context', () => {
    const rules = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(rules[0]).toBe('**');
    const allowed = rules.filter((r) => r.startsWith('!')).map((r) => r.slice(1).replace(/\/\*\*$/, ''));
    const copied = list
      .flatMap((s) => ops(s, 'COPY'))
      .filter((c) => !c.args.startsWith('--from='))
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    expect(copied.length).toBeGreaterThan(0);
    for (const src of copied) expect(allowed, `COPY ${src}`).toContain(src);
    for (const a of allowed) expect(a).not.toMatch(/node_modules|dist|\.git|\.env/);
  });
});
