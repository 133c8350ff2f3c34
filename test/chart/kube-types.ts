// Checks rendered Kubernetes objects against the API of one Kubernetes version, without an API server: each object
// becomes an object literal typed with that version's types from the npm package kubernetes-types (installed under
// the aliases kubernetes-types-X.Y, one per version the tests need), and tsc reports every field the type does not
// declare (excess-property checks on fresh literals, at every depth), every wrong type and every missing required
// field. A field newer than the version is exactly what its API server rejects ("field not declared in schema").
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareVersions, read, ROOT } from './repo.js';

type Obj = Record<string, any>;

/** Installed kubernetes-types versions ("1.26", …), from package.json's kubernetes-types-X.Y aliases, oldest first. */
export function installedTypeVersions(): string[] {
  const pkg = JSON.parse(read('package.json')) as { devDependencies?: Record<string, string> };
  return Object.keys(pkg.devDependencies ?? {})
    .flatMap((name) => /^kubernetes-types-(\d+\.\d+)$/.exec(name)?.[1] ?? [])
    .sort((a, b) => compareVersions(`${a}.0`, `${b}.0`));
}

/** The newest installed types version that is not newer than `kubeVersion` (so nothing newer can slip through). */
export function typesFor(kubeVersion: string): string {
  const fit = installedTypeVersions().filter((t) => compareVersions(`${t}.0`, kubeVersion) <= 0);
  if (fit.length === 0) throw new Error(`no kubernetes-types at or below ${kubeVersion}: add an alias kubernetes-types-X.Y`);
  return fit.at(-1)!;
}

/**
 * The schema extensions (x-kubernetes-*) an API server of the floor knows. kubernetes-types leaves them out of
 * JSONSchemaProps, so they are taken out before the type check and checked here: x-kubernetes-validations items
 * against ValidationRule (whose newer fields, e.g. reason or messageExpression, are version-dependent), the rest by name.
 */
const SCHEMA_EXTENSIONS = new Set([
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

export interface Problem {
  readonly object: string;
  readonly message: string;
}

/** Kinds from outside Kubernetes itself (checked by their own CRDs), given as "apiVersion kind". */
const NOT_KUBERNETES_KINDS = new Set(['monitoring.coreos.com/v1 ServiceMonitor']);

/**
 * Problems tsc finds with `docs` against kubernetes-types of `typesVersion`. Objects of NOT_KUBERNETES_KINDS are
 * skipped; any other kind the package does not define is a problem.
 */
export function checkAgainstKubernetesTypes(docs: readonly Obj[], typesVersion: string): Problem[] {
  const pkgDir = join(ROOT, 'node_modules', `kubernetes-types-${typesVersion}`);
  if (!existsSync(pkgDir)) throw new Error(`${pkgDir} is not installed (npm ci)`);
  const problems: Problem[] = [];
  const lines: string[] = [];
  const owners: string[] = []; // owners[i]: the object whose literal is on generated line i + 1
  const emit = (text: string, owner: string) => {
    for (const line of text.split('\n')) {
      lines.push(line);
      owners.push(owner);
    }
  };
  for (const [i, doc] of docs.entries()) {
    const name = `${doc.kind}/${doc.metadata?.name}`;
    if (NOT_KUBERNETES_KINDS.has(`${doc.apiVersion} ${doc.kind}`)) continue;
    const [group, version] = String(doc.apiVersion).includes('/') ? String(doc.apiVersion).split('/') : ['', String(doc.apiVersion)];
    const module = join(pkgDir, group ? group.split('.')[0]! : 'core', version!);
    if (!existsSync(`${module}.d.ts`)) {
      problems.push({ object: name, message: `kubernetes-types ${typesVersion} has no ${doc.apiVersion}` });
      continue;
    }
    const { object, rules } = doc.kind === 'CustomResourceDefinition' ? splitSchemaExtensions(doc, name, problems) : { object: doc, rules: [] };
    emit(`import type { ${doc.kind} as T${i} } from ${JSON.stringify(module)};`, name);
    emit(`export const o${i}: T${i} = ${JSON.stringify(object, null, 1)};`, name);
    if (rules.length > 0) {
      emit(`import type { ValidationRule as R${i} } from ${JSON.stringify(module)};`, name);
      emit(`export const r${i}: R${i}[] = ${JSON.stringify(rules, null, 1)};`, name);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'kube-types-'));
  try {
    writeFileSync(join(dir, 'objects.ts'), `${lines.join('\n')}\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'esnext', moduleResolution: 'bundler', target: 'es2022', types: [], skipLibCheck: true },
        files: ['objects.ts'],
      }),
    );
    let output = '';
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
    } catch (err) {
      output = String((err as { stdout?: unknown }).stdout ?? err);
      if (!/error TS\d+/.test(output)) throw err; // tsc itself failed, not the check
    }
    for (const m of output.matchAll(/objects\.ts\((\d+),\d+\): error (TS\d+: .*)/g)) {
      problems.push({ object: owners[Number(m[1]) - 1] ?? '?', message: m[2]! });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return problems;
}

/** A copy of a CRD with every x-kubernetes-* key taken out of its schemas, and the validation rules found. */
function splitSchemaExtensions(crd: Obj, name: string, problems: Problem[]): { object: Obj; rules: Obj[] } {
  const rules: Obj[] = [];
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    const out: Obj = {};
    for (const [k, v] of Object.entries(node)) {
      if (!k.startsWith('x-kubernetes-')) out[k] = strip(v);
      else if (!SCHEMA_EXTENSIONS.has(k)) problems.push({ object: name, message: `unknown schema extension ${k}` });
      else if (k === 'x-kubernetes-validations') rules.push(...(v as Obj[]));
    }
    return out;
  };
  return { object: strip(crd) as Obj, rules };
}
