// The chart takes exactly the sizes and durations `serve` takes: a value helm installs must not crash-loop the pods.
// The schema's size pattern is the CLI's grammar (src/cli/size-grammar.ts), and helm itself is asked about one list
// of samples that `serve` reads too.
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../src/cli/serve-options.js';
import { SIZE_PATTERN } from '../../src/cli/size-grammar.js';
import { configData, renderChart } from './helm.js';
import { read } from './repo.js';

const SIZE_VALUES = [['gateway.maxJsonBody', 'MG_MAX_JSON_BODY'] as const, ['gateway.maxUploadBody', 'MG_MAX_UPLOAD_BODY'] as const];

/** Sizes on both sides of every bound and spelling the grammar has. */
const SIZE_SAMPLES = [
  ...[
    '1024',
    '1kb',
    '512kb',
    '20mb',
    '20 MB',
    '1.5gb',
    '1.5GiB',
    '0.5mb',
    '0.0009765625mb',
    '64gb',
    '64.0gb',
    '68719476736',
    '0001024',
    '1024.5',
    '3k',
    '2KiB',
  ],
  ...['512', '5b', '0.5kb', '1023.9', '0.0009mb', '64.1gb', '65gb', '68719476737', '1tb', '.5mb', '1e6', '20 megs', ' 20mb', '20mb ', '1,5mb', '-1kb'],
];

/** What `serve` makes of the rendered ConfigMap: the options, or its one-line refusal. */
function serveReads(data: Record<string, string>) {
  return parseServeArgs([], { ...data, POD_NAME: 'gateway-0' });
}

describe('chart size values and the CLI size grammar', () => {
  const schema = JSON.parse(read('charts/model-gateway/values.schema.json'));

  it.each(SIZE_VALUES)('%s: the schema pattern is the CLI grammar (or empty for the default)', (path) => {
    const property = schema.properties.gateway.properties[path.split('.')[1]!];
    expect(property.anyOf).toEqual([{ const: '' }, { type: 'string', pattern: SIZE_PATTERN }]);
  });

  it.each(SIZE_SAMPLES)('%j: helm installs it exactly when serve starts with it', async (sample) => {
    const cli = parseServeArgs([], { MG_MAX_JSON_BODY: sample });
    const renders = await Promise.all(SIZE_VALUES.map(([path]) => renderChart(['--set-json', `${path}=${JSON.stringify(sample)}`])));
    for (const [i, rendered] of renders.entries()) {
      const [path, env] = SIZE_VALUES[i]!;
      expect(rendered.ok, `${path}=${sample}: helm ${rendered.ok ? 'accepted' : 'refused'}, serve ${cli.kind}`).toBe(cli.kind === 'options');
      if (!rendered.ok) {
        expect(rendered.error).toContain(path.replace('.', '/'));
        continue;
      }
      const data = configData(rendered.objects);
      expect(data[env]).toBe(sample);
      const served = serveReads(data);
      expect(served.kind, JSON.stringify(served)).toBe('options');
    }
  });
});

describe('chart durations and the CLI duration parser', () => {
  // The chart passes one duration, whole seconds (MG_DRAIN_TIMEOUT); its schema bound must be the CLI's (1h).
  it.each([0, 1, 25, 3600])('drainTimeoutSeconds %d renders a drain timeout serve takes', async (seconds) => {
    const rendered = await renderChart(['--set', `gateway.drainTimeoutSeconds=${seconds}`]);
    expect(rendered.ok).toBe(true);
    if (!rendered.ok) return;
    const served = serveReads(configData(rendered.objects));
    expect(served).toMatchObject({ kind: 'options', options: { drainTimeoutMs: seconds * 1000 } });
  });

  it.each(['3601', '-1', '1.5', '25s'])('drainTimeoutSeconds %s is refused by helm, as serve refuses what it would render', async (value) => {
    const rendered = await renderChart(['--set', `gateway.drainTimeoutSeconds=${value}`]);
    expect(rendered.ok).toBe(false);
    expect(parseServeArgs([], { MG_DRAIN_TIMEOUT: '3601s' }).kind).toBe('error');
  });
});
