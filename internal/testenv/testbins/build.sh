#!/usr/bin/env bash
# Builds the real etcd and kube-apiserver that the end-to-end tests start, once,
# into a git-ignored cache. A warm Go build cache makes a rebuild take seconds.
# With the argument kube-controller-manager it also builds that (only the tests
# that need a garbage collector ask for it). It always builds s3server, the S3
# the agent tests publish to (gofakes3 behind a stand-in for IAM), and
# gcsserver, their GCS (fake-gcs-server behind the same, from its own module
# in gcsserver/), again whenever its source or the module's pins change.
set -euo pipefail
with_kcm=false
for arg in "$@"; do
  case $arg in
    kube-controller-manager) with_kcm=true ;;
    *) echo "usage: $0 [kube-controller-manager]" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
out=${RECLAIM_TESTBINS:-$here/../../../.cache/testbins}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$here"
# gcsserver is a module of its own: its build runs beside the others', each
# filling the other's idle moments.
gcsstamp=$(cat gcsserver/main.go gcsserver/go.sum | sha256sum | cut -c1-16)
gcs= tmp=
trap 'if [ -n "$gcs" ]; then kill "$gcs" 2>/dev/null || true; fi; if [ -n "$tmp" ]; then rm -rf "$tmp"; fi' EXIT
if [ ! -x "$out/gcsserver" ] || [ "$(cat "$out/gcsserver.stamp" 2>/dev/null)" != "$gcsstamp" ]; then
  echo "building gcsserver (fake-gcs-server)" >&2
  (cd gcsserver && go build -trimpath -ldflags "-s -w" -o "$out/gcsserver.tmp" . &&
    mv "$out/gcsserver.tmp" "$out/gcsserver" && echo "$gcsstamp" > "$out/gcsserver.stamp") &
  gcs=$!
fi
wait_gcs() { if [ -n "$gcs" ]; then wait "$gcs"; gcs=; fi; }
kube_version=v1.31.4
# One `go build` for every binary of this module that is missing, so the go
# command keeps both cores busy across all of them (one build after another
# leaves a core idle through each link and each build's last packages), and
# stripped (-s -w): nobody debugs these, and the DWARF is a third of each
# link's work.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=31"
pkgs=() names=()
if [ ! -x "$out/etcd" ]; then
  pkgs+=(go.etcd.io/etcd/server/v3) names+=(etcd)
fi
if [ ! -x "$out/kube-apiserver" ]; then
  pkgs+=(k8s.io/kubernetes/cmd/kube-apiserver) names+=(kube-apiserver)
fi
if $with_kcm && [ ! -x "$out/kube-controller-manager" ]; then
  pkgs+=(k8s.io/kubernetes/cmd/kube-controller-manager) names+=(kube-controller-manager)
fi
s3stamp=$(cat s3server/main.go go.sum | sha256sum | cut -c1-16)
if [ ! -x "$out/s3server" ] || [ "$(cat "$out/s3server.stamp" 2>/dev/null)" != "$s3stamp" ]; then
  pkgs+=(./s3server) names+=(s3server)
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "building ${names[*]} (etcd and kube-apiserver $kube_version with it: about 6 minutes on 2 cores with empty Go caches, seconds with a warm one)" >&2
  tmp=$(mktemp -d "$out/.build.XXXXXX")
  go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}"
  # go build names each binary after its package's path; etcd's ends in /v3,
  # which it drops: "server".
  for name in "${names[@]}"; do
    case $name in
      etcd) mv "$tmp/server" "$out/etcd" ;;
      *) mv "$tmp/$name" "$out/$name" ;;
    esac
  done
  case " ${names[*]} " in *" s3server "*) echo "$s3stamp" > "$out/s3server.stamp" ;; esac
fi
wait_gcs
echo "$out"
