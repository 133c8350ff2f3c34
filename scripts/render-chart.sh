#!/usr/bin/env bash
# Lints both charts with `helm lint --strict`, renders charts/model-gateway once per values file in its ci/ folder
# (and the CRD chart) into test/chart/rendered/, and checks that values the schema must reject make helm fail.
# Every scenario is rendered for the oldest Kubernetes the chart declares (Chart.yaml kubeVersion, the floor), so the
# tests check what the oldest supported API server receives; ci/full-values.yaml is also rendered for the versions
# in KUBE_VERSIONS (the sides of every .Capabilities.KubeVersion gate) as full.kube-<version>.yaml.
# The test suite reads the rendered files (CI has no helm) and fails when they are older than the chart.
#   npm run render:chart
# helm: $HELM, or else the one scripts/k8s-tools.sh unpacks from an npm package.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/test/chart/rendered"
RELEASE=model-gateway
NAMESPACE=model-gateway
# 1.29 takes the exec preStop hook, 1.30 the native sleep; an EKS-style version checks that suffixes still match.
KUBE_VERSIONS=(1.29.15 v1.30.2-eks-1234 1.35.0)

HELM_BIN="$(bash "$ROOT/scripts/k8s-tools.sh" helm)"
echo "using $("$HELM_BIN" version --short 2>/dev/null || "$HELM_BIN" version)" >&2
mkdir -p "$OUT"
# kubeVersion: ">=1.27.0-0" -> 1.27.0
FLOOR="$(sed -nE 's/^kubeVersion: *"?>= *v?([0-9]+\.[0-9]+\.[0-9]+).*$/\1/p' "$ROOT/charts/model-gateway/Chart.yaml")"
[ -n "$FLOOR" ] || { echo "no kubeVersion floor (>=X.Y.Z) in charts/model-gateway/Chart.yaml" >&2; exit 1; }

"$HELM_BIN" lint --strict "$ROOT/charts/model-gateway-crds"
for values in "$ROOT"/charts/model-gateway/ci/*-values.yaml; do
  "$HELM_BIN" lint --strict "$ROOT/charts/model-gateway" --namespace "$NAMESPACE" -f "$values"
done

# A generated id key is random on every render; it is replaced (only where ci/ values give no idKeys) so that
# re-rendering an unchanged chart changes nothing.
hash="$(cd "$ROOT" && npx tsx scripts/chart-inputs.ts charts/model-gateway)"
for values in "$ROOT"/charts/model-gateway/ci/*-values.yaml; do
  name="$(basename "$values" -values.yaml)"
  generated='s/^(  keys: )"[A-Za-z0-9+\/=]{40,}"$/\1"<generated at install>"/'
  grep -q '^idKeys:' "$values" && generated=''
  {
    echo "# chart-inputs-sha256: $hash"
    echo "# helm template $RELEASE charts/model-gateway --namespace $NAMESPACE --kube-version $FLOOR -f charts/model-gateway/ci/$(basename "$values")"
    "$HELM_BIN" template "$RELEASE" "$ROOT/charts/model-gateway" --namespace "$NAMESPACE" --kube-version "$FLOOR" -f "$values" | sed -E "$generated"
  } >"$OUT/$name.yaml"
  # NOTES.txt is rendered only by install; a client-side dry run needs no cluster.
  {
    echo "# chart-inputs-sha256: $hash"
    KUBECONFIG=/dev/null "$HELM_BIN" install "$RELEASE" "$ROOT/charts/model-gateway" --namespace "$NAMESPACE" \
      -f "$values" --dry-run=client | sed -n '/^NOTES:$/,$p'
  } >"$OUT/$name.notes.txt"
  echo "rendered test/chart/rendered/$name.yaml and $name.notes.txt" >&2
done

for version in "${KUBE_VERSIONS[@]}"; do
  {
    echo "# chart-inputs-sha256: $hash"
    echo "# helm template $RELEASE charts/model-gateway --namespace $NAMESPACE --kube-version $version -f charts/model-gateway/ci/full-values.yaml"
    "$HELM_BIN" template "$RELEASE" "$ROOT/charts/model-gateway" --namespace "$NAMESPACE" --kube-version "$version" \
      -f "$ROOT/charts/model-gateway/ci/full-values.yaml"
  } >"$OUT/full.kube-$version.yaml"
  echo "rendered test/chart/rendered/full.kube-$version.yaml" >&2
done

crd_hash="$(cd "$ROOT" && npx tsx scripts/chart-inputs.ts charts/model-gateway-crds)"
{
  echo "# chart-inputs-sha256: $crd_hash"
  echo "# helm template model-gateway-crds charts/model-gateway-crds --kube-version $FLOOR"
  "$HELM_BIN" template model-gateway-crds "$ROOT/charts/model-gateway-crds" --kube-version "$FLOOR"
} >"$OUT/crds.yaml"
echo "rendered test/chart/rendered/crds.yaml" >&2

# Values the schema (or a template check) must reject: helm has to refuse every one of them.
bad=(
  "replicaCount=-1"
  "service.port=0"
  "gateway.metricsPort=70000"
  "image.pullPolicy=Sometimes"
  "image.tag=latest"
  "unknownKey=1"
  "gateway.logLevel=verbose"
  "gateway.metricsPort=8080"
  "securityContext.allowPrivilegeEscalation=true"
  # Leader election off with more than one gateway process: every process would write every status.
  "gateway.leaderElection.enabled=false,replicaCount=2"
  "gateway.leaderElection.enabled=false,replicaCount=1,autoscaling.enabled=true"
  "gateway.leaderElection.enabled=false,replicaCount=1,gateway.workers=2"
  # Two Redis sources at once: the in-chart one and an external URL.
  "redis.inChart.enabled=true,redis.enabled=true,redis.url=redis://r:6379"
  "redis.inChart.maxmemory=lots"
  "responsesRedis.url=http://redis:6379"
  # Sizes serve refuses (under 1kb): the pods would crash-loop.
  "gateway.maxJsonBody=5b"
  "gateway.maxUploadBody=0.5kb"
  # A ratio outside [0, 1], from --set (a string) as from a values file.
  "tracing.samplerRatio=1.5"
  "tracing.samplerRatio=lots"
)
for setting in "${bad[@]}"; do
  if "$HELM_BIN" template "$RELEASE" "$ROOT/charts/model-gateway" --set "$setting" >/dev/null 2>&1; then
    echo "helm accepted bad value $setting" >&2
    exit 1
  fi
done
# Below the declared floor helm must refuse to render at all (the floor is what the chart is checked against).
below="1.$(( $(echo "$FLOOR" | cut -d. -f2) - 1 )).0"
for chart in model-gateway model-gateway-crds; do
  if "$HELM_BIN" template "$RELEASE" "$ROOT/charts/$chart" --kube-version "$below" >/dev/null 2>&1; then
    echo "helm rendered charts/$chart for Kubernetes $below, below the floor $FLOOR" >&2
    exit 1
  fi
done
if "$HELM_BIN" template "$RELEASE" "$ROOT/charts/model-gateway" --set-json 'gateway.watchNamespaces=["*","team-a"]' >/dev/null 2>&1; then
  echo 'helm accepted gateway.watchNamespaces=["*","team-a"]' >&2
  exit 1
fi
echo "helm refused all ${#bad[@]} bad settings and the mixed namespace list" >&2
