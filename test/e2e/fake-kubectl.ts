// A stand-in for `kubectl patch --type merge` against a manifest directory, so test/e2e/smoke.ts can run against a
// gateway using the file source (which hot-reloads the edited file) on a machine without a cluster. It supports
// exactly the call smoke.ts makes:
//   kubectl patch RESOURCE.GROUP NAME --namespace NS --type merge --patch JSON
// and edits the one manifest of that kind, name and namespace under $MG_FAKE_KUBECTL_DIR. Run with plain node
// (type stripping): KUBECTL="node test/e2e/fake-kubectl.ts".
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

const KINDS: Record<string, string> = {
  'gatewaytokens.modelgateway.io': 'GatewayToken',
  'groups.modelgateway.io': 'Group',
  'modelroutes.modelgateway.io': 'ModelRoute',
};

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function main(args: string[]): number {
  const dir = process.env.MG_FAKE_KUBECTL_DIR;
  const [verb, resource, name] = args;
  const kind = resource === undefined ? undefined : KINDS[resource];
  const namespace = option(args, '--namespace') ?? 'default';
  const patchText = option(args, '--patch');
  if (!dir || verb !== 'patch' || !kind || !name || option(args, '--type') !== 'merge' || !patchText) {
    process.stderr.write(`fake-kubectl: unsupported call: ${args.join(' ')}\n`);
    return 2;
  }
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(dir, f))) {
    const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Record<string, any> | null);
    const i = docs.findIndex((d) => d?.kind === kind && d.metadata?.name === name && (d.metadata?.namespace ?? 'default') === namespace);
    if (i < 0) continue;
    docs[i] = mergePatch(docs[i], JSON.parse(patchText)) as Record<string, any>;
    // Write then rename, as kubectl's server-side effect is atomic too: the watcher never reads half a file.
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, docs.filter(Boolean).map((d) => stringify(d)).join('---\n'));
    renameSync(tmp, file);
    process.stdout.write(`${resource}/${name} patched\n`);
    return 0;
  }
  process.stderr.write(`Error from server (NotFound): ${resource} "${name}" not found\n`);
  return 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
