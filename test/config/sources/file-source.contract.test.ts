// The shared ConfigSource contract, run against the file source: one YAML file per object in a temporary directory.
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { RawObject } from '../../../src/compile/resources.js';
import { FileSource } from '../../../src/sources/file/file-source.js';
import { captureLogs } from '../../support/log-capture.js';
import { describeSourceContract } from '../source-contract.js';

const fileOf = (dir: string, o: RawObject) => join(dir, `${String(o.kind)}-${String(o.metadata?.namespace)}-${String(o.metadata?.name)}.yaml`.toLowerCase());

describeSourceContract('file (manifest directory)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-file-contract-'));
  const source = new FileSource({ dir, logger: captureLogs().logger, debounceMs: 20, settleMs: 100 }); // deletions are held for settleMs (file-source.ts)
  return {
    source,
    namespace: 'team-a',
    apply: async (o: RawObject) => writeFileSync(fileOf(dir, o), stringify(o)),
    delete: async (o: RawObject) => unlinkSync(fileOf(dir, o)),
    teardown: async () => {
      await source.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
