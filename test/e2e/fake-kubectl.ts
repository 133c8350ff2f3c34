// A stand-in for `kubectl patch --type merge`, so test/e2e/smoke.ts can run on a machine without a cluster. It
// supports exactly the call smoke.ts makes:
//   kubectl patch RESOURCE.GROUP NAME --namespace NS --type merge --patch JSON
// With $MG_FAKE_KUBECTL_SERVER (an API server URL, e.g. the fake one in test/fake-apiserver) it sends the same
// merge patch kubectl would; with $MG_FAKE_KUBECTL_DIR it edits the one manifest of that kind, name and namespace
// in a directory the file source watches. Run with plain node (type stripping): KUBECTL="node test/e2e/fake-kubectl.ts".
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

/** The merge patch through the API server, as `kubectl patch --type merge` sends it. */
async function patchViaServer(server: string, resource: string, namespace: string, name: string, patch: string): Promise<number> {
  const [plural, ...group] = resource.split('.');
  const res = await fetch(`${server}/apis/${group.join('.')}/v1alpha1/namespaces/${namespace}/${plural}/${name}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json', authorization: 'Bearer fake-kubectl-user' },
    body: patch,
  });
  if (!res.ok) {
    process.stderr.write(`Error from server (${res.status}): ${await res.text()}\n`);
    return 1;
  }
  process.stdout.write(`${resource}/${name} patched\n`);
  return 0;
}

async function main(args: string[]): Promise<number> {
  const dir = process.env.MG_FAKE_KUBECTL_DIR;
  const server = process.env.MG_FAKE_KUBECTL_SERVER;
  const [verb, resource, name] = args;
  const kind = resource === undefined ? undefined : KINDS[resource];
  const namespace = option(args, '--namespace') ?? 'default';
  const patchText = option(args, '--patch');
  if (!(dir || server) || verb !== 'patch' || !kind || !name || option(args, '--type') !== 'merge' || !patchText) {
    process.stderr.write(`fake-kubectl: unsupported call: ${args.join(' ')}\n`);
    return 2;
  }
  if (server) return patchViaServer(server, resource!, namespace, name, patchText);
  for (const file of readdirSync(dir!)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => join(dir!, f))) {
    const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Record<string, any> | null);
    const i = docs.findIndex((d) => d?.kind === kind && d.metadata?.name === name && (d.metadata?.namespace ?? 'default') === namespace);
    if (i < 0) continue;
    docs[i] = mergePatch(docs[i], JSON.parse(patchText)) as Record<string, any>;
    // Write then rename, as kubectl's server-side effect is atomic too: the watcher never reads half a file.
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(
      tmp,
      docs
        .filter(Boolean)
        .map((d) => stringify(d))
        .join('---\n'),
    );
    renameSync(tmp, file);
    process.stdout.write(`${resource}/${name} patched\n`);
    return 0;
  }
  process.stderr.write(`Error from server (NotFound): ${resource} "${name}" not found\n`);
  return 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
