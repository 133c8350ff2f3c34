#!/usr/bin/env bash
# End-to-end test on a throwaway kind cluster, for machines with Docker, kind, helm, kubectl, curl and Node 24:
#   build the image -> kind load -> helm install the CRD chart and the chart -> kubectl apply examples/kubernetes/
#   and the smoke fixtures -> wait for Ready conditions -> port-forward -> SDK smoke test (test/e2e/smoke.ts)
#   -> helm upgrade keeps the id-sealing key -> tear down.
# Exits non-zero on any failure, after printing pods, events, logs and the custom resources.
#   bash test/e2e/kind.sh            KEEP_CLUSTER=1 bash test/e2e/kind.sh   (leave the cluster for debugging)
# Optional: KIND_CLUSTER_NAME, EXAMPLES_DIR (default examples/kubernetes), E2E_LOCAL_PORT, E2E_LOCAL_METRICS_PORT.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLUSTER="${KIND_CLUSTER_NAME:-model-gateway-e2e}"
NAMESPACE="model-gateway"
RELEASE="model-gateway"
IMAGE_REPO="model-gateway"
IMAGE_TAG="e2e-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo local)"
LOCAL_PORT="${E2E_LOCAL_PORT:-18080}"
LOCAL_METRICS_PORT="${E2E_LOCAL_METRICS_PORT:-19090}"
KEEP_CLUSTER="${KEEP_CLUSTER:-0}"
EXAMPLES_DIR="${EXAMPLES_DIR:-$ROOT/examples/kubernetes}"
CR_TYPES="modelroutes.modelgateway.io,groups.modelgateway.io,gatewaytokens.modelgateway.io"

WORK="$(mktemp -d)"
# A private kubeconfig: the user's contexts are never touched.
export KUBECONFIG="$WORK/kubeconfig"
PF_PIDS=()
CLUSTER_CREATED=0

log() { printf '\n==> %s\n' "$*" >&2; }

need() {
  local missing=()
  for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "kind.sh needs: ${missing[*]}" >&2
    exit 2
  fi
}

diagnostics() {
  log "diagnostics"
  kubectl get pods,svc,endpoints -n "$NAMESPACE" -o wide || true
  kubectl get events -n "$NAMESPACE" --sort-by=.lastTimestamp | tail -n 40 || true
  kubectl logs -n "$NAMESPACE" -l "app.kubernetes.io/instance=$RELEASE" --all-containers --tail=200 --prefix || true
  kubectl get "$CR_TYPES" -A -o yaml || true
}

teardown() {
  local code=$?
  trap - EXIT
  for pid in "${PF_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ "$code" -ne 0 ] && [ "$CLUSTER_CREATED" = 1 ]; then diagnostics; fi
  if [ "$CLUSTER_CREATED" = 1 ]; then
    if [ "$KEEP_CLUSTER" = 1 ]; then
      log "keeping cluster $CLUSTER (KUBECONFIG=$KUBECONFIG); delete it with: kind delete cluster --name $CLUSTER"
    else
      log "deleting cluster $CLUSTER"
      kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true
      rm -rf "$WORK"
    fi
  fi
  if [ "$code" -eq 0 ]; then log "e2e: PASSED"; else log "e2e: FAILED (exit $code)"; fi
  exit "$code"
}
trap teardown EXIT

# Starts `kubectl port-forward` in the background and waits until the local port answers.
port_forward() {
  local target=$1 local_port=$2 remote_port=$3 path=$4
  kubectl port-forward -n "$NAMESPACE" "$target" "$local_port:$remote_port" >"$WORK/pf-$local_port.log" 2>&1 &
  PF_PIDS+=("$!")
  for _ in $(seq 1 50); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$local_port$path"; then return 0; fi
    sleep 0.2
  done
  cat "$WORK/pf-$local_port.log" >&2
  echo "port-forward to $target:$remote_port did not come up" >&2
  return 1
}

need docker kind helm kubectl curl node npx
[ -d "$EXAMPLES_DIR" ] || { echo "missing $EXAMPLES_DIR" >&2; exit 2; }
[ -d "$ROOT/node_modules/openai" ] || (cd "$ROOT" && npm ci --no-audit --no-fund)

log "creating kind cluster $CLUSTER"
kind create cluster --name "$CLUSTER" --kubeconfig "$KUBECONFIG" --wait 180s
CLUSTER_CREATED=1

log "building image $IMAGE_REPO:$IMAGE_TAG"
docker build -t "$IMAGE_REPO:$IMAGE_TAG" \
  --build-arg VERSION="$(node -p 'require(process.argv[1]).version' "$ROOT/package.json")" \
  --build-arg REVISION="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)" \
  --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  "$ROOT"
kind load docker-image "$IMAGE_REPO:$IMAGE_TAG" --name "$CLUSTER"

log "installing the CRD chart"
helm upgrade --install model-gateway-crds "$ROOT/charts/model-gateway-crds" --wait --timeout 2m
kubectl wait --for condition=Established --timeout=60s \
  crd/modelroutes.modelgateway.io crd/groups.modelgateway.io crd/gatewaytokens.modelgateway.io

log "applying examples/kubernetes/ and the smoke fixtures"
kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -R -f "$EXAMPLES_DIR/"
kubectl apply -f "$ROOT/test/e2e/manifests/"

# The namespaces that now hold a ModelRoute, Group or GatewayToken (the examples' and the fixtures'), for the waits
# below; ci/e2e-values.yaml watches the same ones (a test keeps the two in step).
mapfile -t WATCHED < <(kubectl get "$CR_TYPES" -A -o jsonpath='{range .items[*]}{.metadata.namespace}{"\n"}{end}' | sort -u)
[ ${#WATCHED[@]} -gt 0 ] || { echo "no custom resources were applied" >&2; exit 1; }
log "installing the chart with ci/e2e-values.yaml (watching ${WATCHED[*]})"
helm upgrade --install "$RELEASE" "$ROOT/charts/model-gateway" \
  --namespace "$NAMESPACE" \
  -f "$ROOT/charts/model-gateway/ci/e2e-values.yaml" \
  --set image.repository="$IMAGE_REPO" \
  --set image.tag="$IMAGE_TAG" \
  --set image.pullPolicy=Never \
  --wait --timeout 5m
kubectl rollout status -n "$NAMESPACE" "deployment/$RELEASE" --timeout=120s

log "waiting for Ready conditions (written by the elected leader)"
for ns in "${WATCHED[@]}"; do
  for type in ${CR_TYPES//,/ }; do
    if [ -n "$(kubectl get "$type" -n "$ns" -o name)" ]; then
      kubectl wait --for=condition=Ready "$type" --all -n "$ns" --timeout=120s
    fi
  done
done
kubectl get modelgateway -A

log "port-forwarding and running the SDK smoke test"
port_forward "svc/$RELEASE" "$LOCAL_PORT" 8080 /healthz
port_forward "svc/$RELEASE" "$LOCAL_METRICS_PORT" 9090 /metrics
curl -fsS "http://127.0.0.1:$LOCAL_PORT/readyz" >/dev/null
(cd "$ROOT" && MG_E2E_BASE_URL="http://127.0.0.1:$LOCAL_PORT/v1" MG_E2E_NAMESPACE="$NAMESPACE" npx tsx test/e2e/smoke.ts)

log "checking /metrics on its own port"
metrics="$(curl -fsS "http://127.0.0.1:$LOCAL_METRICS_PORT/metrics")"
grep -q '^model_gateway_requests_total' <<<"$metrics" || { echo "model_gateway_requests_total missing from /metrics" >&2; exit 1; }
if curl -fsS -o /dev/null "http://127.0.0.1:$LOCAL_PORT/metrics"; then
  echo "/metrics must not be served on the API port" >&2
  exit 1
fi

log "helm upgrade keeps the generated id-sealing key"
key_before="$(kubectl get secret -n "$NAMESPACE" "$RELEASE-id-keys" -o jsonpath='{.data.keys}')"
helm upgrade "$RELEASE" "$ROOT/charts/model-gateway" --namespace "$NAMESPACE" --reuse-values --wait --timeout 5m
key_after="$(kubectl get secret -n "$NAMESPACE" "$RELEASE-id-keys" -o jsonpath='{.data.keys}')"
if [ -z "$key_before" ] || [ "$key_before" != "$key_after" ]; then
  echo "the id-sealing key changed on upgrade" >&2
  exit 1
fi

log "the pods run as non-root with a read-only root filesystem"
kubectl get pods -n "$NAMESPACE" -l "app.kubernetes.io/instance=$RELEASE" \
  -o jsonpath='{range .items[*]}{.spec.securityContext.runAsNonRoot} {.spec.containers[0].securityContext.readOnlyRootFilesystem}{"\n"}{end}' |
  while read -r non_root read_only; do
    if [ "$non_root" != true ] || [ "$read_only" != true ]; then
      echo "pod security context not applied" >&2
      exit 1
    fi
  done
