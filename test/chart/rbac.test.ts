// The chart's RBAC grants every API call the gateway makes (REQUIRED_RULES, exported by the Kubernetes source) and
// nothing broader: no wildcards, no extra verbs or resources, Leases only in the release namespace, and
// cluster-wide access (Secrets included) only when every namespace is watched.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIRED_RULES } from '../../src/sources/kubernetes/kubernetes-rbac.js';
import { read, readYaml, ROOT } from './repo.js';

interface ChartRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  namedLease?: boolean;
}
interface RuleFile {
  watched: ChartRule[];
  leaderElection: ChartRule[];
}

const rules = readYaml<RuleFile>('charts/model-gateway/files/rbac-rules.yaml');
const LEASES = 'coordination.k8s.io/leases';

/** Each rule as "group/resource verb" triples, the unit RBAC authorises. */
function grants(list: readonly { apiGroups: readonly string[]; resources: readonly string[]; verbs: readonly string[] }[]) {
  const out = new Set<string>();
  for (const r of list) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${g}/${res} ${v}`);
  return out;
}

const required = grants(REQUIRED_RULES);
const watched = grants(rules.watched);
const leader = grants(rules.leaderElection);

describe('chart RBAC (charts/model-gateway/files/rbac-rules.yaml)', () => {
  it('the required list is not empty and names the three kinds, their status, Secrets and Leases', () => {
    for (const g of ['modelgateway.io/modelroutes watch', 'modelgateway.io/gatewaytokens/status patch', '/secrets list', `${LEASES} update`])
      expect(required).toContain(g);
  });

  it('covers every required grant', () => {
    const granted = new Set([...watched, ...leader]);
    expect([...required].filter((g) => !granted.has(g))).toEqual([]);
  });

  it('grants nothing beyond the required list', () => {
    expect([...watched, ...leader].filter((g) => !required.has(g))).toEqual([]);
  });

  it('has no wildcard and no unknown rule field', () => {
    for (const r of [...rules.watched, ...rules.leaderElection]) {
      expect(Object.keys(r).filter((k) => !['apiGroups', 'resources', 'verbs', 'namedLease'].includes(k))).toEqual([]);
      for (const v of [...r.apiGroups, ...r.resources, ...r.verbs]) expect(v).not.toContain('*');
    }
  });

  it('keeps Leases out of the watched namespaces and everything else out of the leader-election Role', () => {
    expect([...watched].filter((g) => g.startsWith(`${LEASES} `))).toEqual([]);
    expect([...leader].filter((g) => !g.startsWith(`${LEASES} `))).toEqual([]);
  });

  it('limits get/update of Leases to the named Lease (create cannot be limited by name)', () => {
    for (const r of rules.leaderElection) {
      const mutatesExisting = r.verbs.some((v) => v !== 'create');
      expect(r.namedLease === true, `rule ${JSON.stringify(r)}`).toBe(mutatesExisting);
    }
  });
});

describe('RBAC templates use the rule file, and cluster scope only for "*"', () => {
  const helpers = read('charts/model-gateway/templates/_helpers.tpl');
  const role = read('charts/model-gateway/templates/role.yaml');
  const clusterRole = read('charts/model-gateway/templates/clusterrole.yaml');
  const leaderRole = read('charts/model-gateway/templates/role-leader-election.yaml');

  it('the rule helper reads files/rbac-rules.yaml', () => {
    expect(helpers).toMatch(/define "model-gateway.rbacRules"[\s\S]*?\.Files\.Get "files\/rbac-rules\.yaml"/);
  });

  it('"watch all namespaces" means exactly: "*" is in gateway.watchNamespaces', () => {
    expect(helpers).toMatch(
      /define "model-gateway.watchAllNamespaces" -}}\s*{{- if has "\*" \.Values\.gateway\.watchNamespaces -}}true{{- end -}}\s*{{- end -}}/,
    );
  });

  it('role.yaml: namespaced Roles with the watched rules, one per watched namespace, never when watching all', () => {
    const firstAction = role.split('\n').find((l) => l.startsWith('{{') && !l.startsWith('{{- /*'));
    expect(firstAction).toBe('{{- if and .Values.rbac.create (not (include "model-gateway.watchAllNamespaces" .)) }}');
    expect(role).toContain('range $ns := include "model-gateway.watchNamespaces" . | fromJsonArray');
    expect(role).toContain('toYaml $rules.watched');
    expect(role).not.toContain('leaderElection');
    expect(role).not.toMatch(/kind: Cluster/);
  });

  it('clusterrole.yaml: the only cluster-scoped grant, rendered only when watching all namespaces', () => {
    const lines = clusterRole.split('\n').filter((l) => l.trim() !== '');
    const firstAction = lines.find((l) => l.startsWith('{{') && !l.startsWith('{{- /*'));
    expect(firstAction).toBe('{{- if and .Values.rbac.create (include "model-gateway.watchAllNamespaces" .) }}');
    expect(lines.at(-1)).toBe('{{- end }}');
    // The guard is the only block at top level: its end is the file's last line, so nothing escapes it.
    expect(clusterRole.match(/{{-? (if|range|with)\b/g)?.length).toBe(1);
    expect(clusterRole).toContain('toYaml $rules.watched');
    expect(clusterRole).not.toContain('leaderElection');
  });

  it('the leader-election Role is namespaced to the release and carries only the lease rules', () => {
    expect(leaderRole).toContain('kind: Role\n');
    expect(leaderRole).toContain('namespace: {{ .Release.Namespace }}');
    expect(leaderRole).toContain('range $rules.leaderElection');
    expect(leaderRole).toContain('resourceNames: [{{ include "model-gateway.leaseName" $ | quote }}]');
    expect(leaderRole).not.toContain('$rules.watched');
  });

  it('no other template grants RBAC', () => {
    const others = readdirSync(join(ROOT, 'charts/model-gateway/templates'))
      .filter((f) => !['role.yaml', 'clusterrole.yaml', 'role-leader-election.yaml'].includes(f))
      .filter((f) => /rbac\.authorization\.k8s\.io|kind: (Cluster)?Role/.test(read(`charts/model-gateway/templates/${f}`)));
    expect(others).toEqual([]);
  });
});
