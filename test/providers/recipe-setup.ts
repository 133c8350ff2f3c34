// Runs a provider recipe from examples/providers/ as written, with only its backend's baseURL origin pointed at a
// loopback fake (the path kept) and, where a test needs it, fields of its documents replaced; plus the Group and
// GatewayToken a client needs to use every model.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ALICE_KEY } from '../helpers/gateway.js';

const DIR = join(import.meta.dirname, '..', '..', 'examples', 'providers');

export function recipeText(file: string): string {
  return readFileSync(join(DIR, file), 'utf8');
}

type Doc = { kind: string; metadata: { name: string }; stringData?: Record<string, string>; spec?: { backends: Array<Record<string, unknown>> } };

export interface RecipeOptions {
  /** Replaces the origin of every backend's baseURL. */
  readonly origin: string;
  /** Changes to the parsed documents (e.g. a real service account key in place of the placeholder). */
  readonly edit?: (docs: Doc[]) => void;
}

/** The recipe's manifests, retargeted, plus a client's Group and token; and the Secret values it holds. */
export function recipe(file: string, o: RecipeOptions): { yaml: string; secrets: Record<string, string> } {
  const docs = parseAllDocuments(recipeText(file)).map((d) => d.toJS() as Doc);
  for (const d of docs)
    for (const b of d.spec?.backends ?? []) {
      const url = new URL(String(b['baseURL']));
      b['baseURL'] = o.origin + url.pathname;
    }
  o.edit?.(docs);
  const secrets: Record<string, string> = {};
  for (const d of docs) if (d.kind === 'Secret') Object.assign(secrets, d.stringData);
  const yaml = [...docs.map((d) => JSON.stringify(d)), clientManifests('ai')].join('\n---\n');
  return { yaml, secrets };
}

/** A Group allowing every model and a GatewayToken in it holding ALICE_KEY, in `namespace` (default: the default one). */
export function clientManifests(namespace?: string): string {
  const metadata = (name: string) => (namespace ? { name, namespace } : { name });
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('alice-key'), stringData: { token: ALICE_KEY } },
    { apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', metadata: metadata('everyone'), spec: { models: ['*'] } },
    {
      apiVersion: 'modelgateway.io/v1alpha1',
      kind: 'GatewayToken',
      metadata: metadata('alice'),
      spec: { group: 'everyone', secretRef: { name: 'alice-key', key: 'token' } },
    },
  ]
    .map((d) => JSON.stringify(d))
    .join('\n---\n');
}
