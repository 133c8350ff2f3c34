// The e2e manifests compile (with the gateway's own compile) to exactly what smoke.ts expects: every object
// Ready, the token's models before and after the group change, the restricted model outside the first group.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile/compile.js';
import { sha256Hex } from '../../src/model/digest.js';
import { isReady } from '../../src/compile/conditions.js';
import { readManifestFiles } from '../../src/sources/file/manifest-files.js';
import { ROOT } from '../chart/repo.js';
import { SMOKE } from './smoke-fixture.js';

const MANIFESTS = join(ROOT, 'test/e2e/manifests');

async function load(group?: string) {
  const { objects, errors } = await readManifestFiles([MANIFESTS]);
  expect(errors).toEqual([]);
  if (group !== undefined) {
    const token = objects.find((o) => o.object.kind === 'GatewayToken' && o.object.metadata?.name === SMOKE.token);
    (token!.object as { spec: { group: string } }).spec.group = group;
  }
  return { objects, ...compile(objects) };
}

describe('e2e smoke fixtures', () => {
  it('every object is Ready and lives in the release namespace', async () => {
    const { objects, statuses } = await load();
    expect(statuses.length).toBe(6);
    for (const s of statuses) expect(isReady(s), `${s.ref}: ${JSON.stringify(s.conditions)}`).toBe(true);
    for (const o of objects) expect(o.object.metadata?.namespace).toBe(SMOKE.namespace);
  });

  it('the key maps to the token, whose models follow its group', async () => {
    const before = (await load()).table.tokensByDigest.get(sha256Hex(SMOKE.key));
    expect(before?.name).toBe(SMOKE.token);
    expect(before?.group.name).toBe(SMOKE.groupBefore);
    expect(before?.models).toEqual(SMOKE.modelsBefore);
    expect(before?.modelSet.has(SMOKE.restrictedModel)).toBe(false);

    const after = (await load(SMOKE.groupAfter)).table.tokensByDigest.get(sha256Hex(SMOKE.key));
    expect(after?.models).toEqual(SMOKE.modelsAfter);
  });

  it('routes serve the families the smoke test calls, from the demo backend', async () => {
    const { table } = await load();
    expect([...table.routes.get(SMOKE.chatModel)!.families]).toEqual(['chat.completions']);
    expect([...table.routes.get(SMOKE.restrictedModel)!.families]).toEqual(['chat.completions']);
    expect([...table.routes.get(SMOKE.embeddingModel)!.families]).toEqual(['embeddings']);
    for (const route of table.routes.values()) expect(route.backends.map((b) => b.name)).toEqual(['demo']);
  });
});
