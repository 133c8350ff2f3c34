// Every chart file that is plain YAML parses; the templates pass a static lint (helm is not installed here).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockProblems, definedTemplates, filesRead, hasPath, includedTemplates, valuesPaths } from './go-template.js';
import { CHART_DIR, CRD_CHART_DIR, read, readYaml, ROOT } from './repo.js';

interface ChartYaml {
  apiVersion: string;
  name: string;
  version: string;
  appVersion: string;
  kubeVersion?: string;
}

const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const pkg = JSON.parse(read('package.json')) as { version: string };

describe.each([
  ['charts/model-gateway', 'model-gateway'],
  ['charts/model-gateway-crds', 'model-gateway-crds'],
])('%s', (dir, name) => {
  it('Chart.yaml is a v2 chart whose appVersion is the package version', () => {
    const chart = readYaml<ChartYaml>(`${dir}/Chart.yaml`);
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe(name);
    expect(chart.version).toMatch(SEMVER);
    expect(chart.appVersion).toBe(pkg.version);
  });

  it('values.yaml parses to a mapping and values.schema.json is JSON', () => {
    expect(readYaml(`${dir}/values.yaml`)).toBeTypeOf('object');
    expect(JSON.parse(read(`${dir}/values.schema.json`))).toHaveProperty('$schema');
  });

  const templateDir = join(dir, 'templates');
  const templates = readdirSync(join(ROOT, templateDir)).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
  const helpers = templates.map((f) => read(`${templateDir}/${f}`)).join('\n');
  const defined = new Set(definedTemplates(helpers));
  const values = readYaml(`${dir}/values.yaml`);

  it.each(templates)('templates/%s: balanced blocks, defined includes, existing values and files', (file) => {
    const src = read(`${templateDir}/${file}`);
    expect(blockProblems(src)).toEqual([]);
    for (const name of includedTemplates(src)) expect(defined, `include "${name}"`).toContain(name);
    for (const path of valuesPaths(src)) expect(hasPath(values, path), `.Values.${path} in values.yaml`).toBe(true);
    for (const file of filesRead(src)) {
      if (file.includes('*')) continue; // globs are checked where their files are (the CRD copies)
      expect(existsSync(join(ROOT, dir, file)), `${dir}/${file}`).toBe(true);
    }
  });
});

describe('plain YAML inside the main chart', () => {
  it('files/rbac-rules.yaml parses', () => {
    const rules = readYaml<Record<string, unknown>>('charts/model-gateway/files/rbac-rules.yaml');
    expect(Object.keys(rules).sort()).toEqual(['leaderElection', 'watched']);
  });

  it('every chart file outside templates/ that ends in .yaml parses', () => {
    for (const chart of [CHART_DIR, CRD_CHART_DIR]) {
      const walk = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? (e.name === 'templates' ? [] : walk(join(dir, e.name))) : [join(dir, e.name)],
        );
      const files = walk(chart).filter((f) => /\.ya?ml$/.test(f));
      expect(files.length).toBeGreaterThan(1);
      for (const f of files) expect(() => readYaml(f.slice(ROOT.length + 1)), f).not.toThrow();
    }
  });
});
