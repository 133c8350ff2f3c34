// tracing.samplerRatio from a values file is a number; from `helm install --set` it is a string. Both are taken
// in [0, 1] and render the same OTEL_TRACES_SAMPLER_ARG, which the gateway's tracing configuration accepts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tracingConfig } from '../../src/features/tracing/tracing-config.js';
import { containerEnv, type Rendered, renderChart } from './helm.js';

const dir = mkdtempSync(join(tmpdir(), 'mg-tracing-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TRACING = ['--set', 'tracing.endpoint=http://collector:4318', '--set', 'tracing.sampler=parentbased_traceidratio'];

/** A values file holding the ratio as YAML writes it (a number when it looks like one). */
function fromValuesFile(ratio: string): Promise<Rendered> {
  const file = join(dir, `ratio-${Buffer.from(ratio).toString('hex')}.yaml`);
  writeFileSync(file, `tracing:\n  samplerRatio: ${ratio}\n`);
  return renderChart([...TRACING, '-f', file]);
}

function samplerArg(rendered: Rendered): string {
  if (!rendered.ok) throw new Error(rendered.error);
  return containerEnv(rendered.objects).OTEL_TRACES_SAMPLER_ARG!;
}

describe('tracing.samplerRatio', () => {
  it.each([
    ['0.1', '0.1'],
    ['0.25', '0.25'],
    ['1', '1'],
    ['0', '0'],
    ['1.0', '1'],
    ['.5', '0.5'],
  ])('%s from --set renders as from a values file: %s', async (ratio, rendered) => {
    const [set, setString, file] = await Promise.all([
      renderChart([...TRACING, '--set', `tracing.samplerRatio=${ratio}`]),
      renderChart([...TRACING, '--set-string', `tracing.samplerRatio=${ratio}`]),
      fromValuesFile(ratio),
    ]);
    expect(samplerArg(set)).toBe(rendered);
    expect(samplerArg(setString)).toBe(rendered);
    expect(samplerArg(file)).toBe(rendered);
    const config = tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_SAMPLER_ARG: rendered });
    expect(config?.ratio).toBe(Number(ratio));
  });

  it.each(['1.5', '-0.1', 'lots', '0.1.2', '1e-3x', ''])('%j is refused, from --set and from a values file alike', async (ratio) => {
    const [set, file] = await Promise.all([renderChart([...TRACING, '--set-string', `tracing.samplerRatio=${ratio}`]), fromValuesFile(JSON.stringify(ratio))]);
    expect(set.ok).toBe(false);
    expect(file.ok).toBe(false);
    if (!set.ok) expect(set.error).toContain('tracing/samplerRatio');
  });

  it('a number a values file spells with an exponent renders as a ratio the gateway reads', async () => {
    const arg = samplerArg(await fromValuesFile('1e-3'));
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_SAMPLER_ARG: arg })?.ratio).toBe(0.001);
  });
});
