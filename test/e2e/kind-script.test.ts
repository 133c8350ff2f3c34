// The control flow of test/e2e/kind.sh, run with stub docker/kind/helm/kubectl/curl/npx that record their
// arguments (no cluster here). This proves the order of steps, the arguments that matter, that teardown always
// deletes the cluster and that any failing step makes the script exit non-zero. It does not prove the real tools
// accept those commands: that needs a machine with Docker, kind and helm.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../chart/repo.js';

const STUBS: Record<string, string> = {
  docker: '',
  kind: '',
  helm: '',
  npx: '',
  kubectl: `
case "$*" in
  *"port-forward"*) exec sleep 30 ;;
  *"apply -f -"*) cat >/dev/null ;;
  *"create namespace"*) printf 'apiVersion: v1\\nkind: Namespace\\nmetadata: {name: model-gateway}\\n' ;;
  *"get modelroutes.modelgateway.io,groups.modelgateway.io,gatewaytokens.modelgateway.io -A -o jsonpath"*)
    printf 'model-gateway\\nmodel-gateway\\nexamples\\n' ;;
  *" -o name"*) echo "object/x" ;;
  *"get secret"*) echo "a2V5LWJ5dGVz" ;;
  *"get pods"*) printf 'true true\\ntrue true\\n' ;;
esac`,
  curl: `
case "$*" in
  *":18080/metrics"*) exit 22 ;;
  *"/metrics"*) echo "model_gateway_requests_total{family=\\"chat.completions\\"} 3" ;;
esac`,
};

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** Runs kind.sh with stubs first on PATH; `fail` names a stub call (regex on "tool args") that exits 1. */
async function run(env: Record<string, string> = {}, fail?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'mg-kind-stubs-'));
  dirs.push(dir);
  const bin = join(dir, 'bin');
  const examples = join(dir, 'examples');
  mkdirSync(bin);
  mkdirSync(examples);
  const log = join(dir, 'calls.log');
  for (const [tool, body] of Object.entries(STUBS)) {
    const path = join(bin, tool);
    writeFileSync(
      path,
      `#!/usr/bin/env bash\nprintf '%s\\n' "${tool} $*" >> "$STUB_LOG"\n` +
        `if [ -n "\${STUB_FAIL:-}" ] && [[ "${tool} $*" =~ $STUB_FAIL ]]; then exit 1; fi\n${body}\nexit 0\n`,
    );
    chmodSync(path, 0o755);
  }
  const child = spawn('bash', [join(ROOT, 'test/e2e/kind.sh')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      STUB_LOG: log,
      STUB_FAIL: fail ?? '',
      EXAMPLES_DIR: examples,
      ...env,
    },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
  return { code, calls, output, examples };
}

const index = (calls: string[], pattern: RegExp) => calls.findIndex((c) => pattern.test(c));

describe('test/e2e/kind.sh control flow (stub tools)', () => {
  it('runs every step in order and deletes the cluster at the end', async () => {
    const { code, calls, output, examples } = await run();
    expect(code, output).toBe(0);
    const order = [
      /^kind create cluster --name model-gateway-e2e /,
      /^docker build -t model-gateway:e2e-\S+ /,
      /^kind load docker-image model-gateway:e2e-\S+ --name model-gateway-e2e$/,
      /^helm upgrade --install model-gateway-crds \S+\/charts\/model-gateway-crds /,
      /^kubectl wait --for condition=Established /,
      new RegExp(`^kubectl apply -R -f ${examples}/$`),
      /^kubectl apply -f \S+\/test\/e2e\/manifests\/$/,
      /^helm upgrade --install model-gateway \S+\/charts\/model-gateway --namespace model-gateway -f \S+\/charts\/model-gateway\/ci\/e2e-values\.yaml /,
      /^kubectl rollout status /,
      /^kubectl wait --for=condition=Ready modelroutes\.modelgateway\.io --all -n examples /,
      /^kubectl port-forward -n model-gateway svc\/model-gateway 18080:8080$/,
      /^npx tsx test\/e2e\/smoke\.ts$/,
      /^helm upgrade model-gateway \S+ --namespace model-gateway --reuse-values /,
      /^kind delete cluster --name model-gateway-e2e$/,
    ];
    const positions = order.map((p) => index(calls, p));
    expect(positions.filter((p) => p < 0).length, `missing step in:\n${calls.join('\n')}`).toBe(0);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(calls.find((c) => c.startsWith('helm upgrade --install model-gateway '))).toMatch(/--set image\.pullPolicy=Never/);
    expect(output).toContain('e2e: PASSED');
  });

  it.each([
    ['the chart install fails', '^helm upgrade --install model-gateway .*charts/model-gateway --namespace'],
    ['a custom resource never becomes Ready', '^kubectl wait --for=condition=Ready'],
    ['the SDK smoke test fails', '^npx tsx test/e2e/smoke.ts'],
    ['the key check fails', '^kubectl get secret'],
  ])('exits non-zero, prints diagnostics and deletes the cluster when %s', async (_, fail) => {
    const { code, calls, output } = await run({}, fail);
    expect(code).not.toBe(0);
    expect(calls.at(-1)).toBe('kind delete cluster --name model-gateway-e2e');
    expect(index(calls, /^kubectl logs -n model-gateway /)).toBeGreaterThan(0);
    expect(output).toContain('e2e: FAILED');
  });

  it('keeps the cluster with KEEP_CLUSTER=1', async () => {
    const { code, calls, output } = await run({ KEEP_CLUSTER: '1' });
    expect(code).toBe(0);
    expect(index(calls, /^kind delete/)).toBe(-1);
    expect(output).toContain('keeping cluster model-gateway-e2e');
  });

  it('stops before creating anything when a tool is missing', async () => {
    const { code, calls, output } = await run({ PATH: '/usr/bin:/bin' });
    expect(code).toBe(2);
    expect(calls).toEqual([]);
    expect(output).toMatch(/kind\.sh needs: .*kind/);
  });
});
