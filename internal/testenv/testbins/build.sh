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
kube_version=v1.31.4
if [ ! -x "$out/etcd" ]; then
  echo "building etcd (under a minute cold)" >&2
  go build -trimpath -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$out/etcd.tmp" "$out/etcd"
fi
if [ ! -x "$out/kube-apiserver" ]; then
  echo "building kube-apiserver $kube_version (a few minutes cold: about 4 on 2 cores with empty Go caches, both binaries)" >&2
  go build -trimpath \
    -ldflags "-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=31" \
    -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver && mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
fi
if $with_kcm && [ ! -x "$out/kube-controller-manager" ]; then
  echo "building kube-controller-manager $kube_version (about 3 minutes on 2 cores after kube-apiserver's build)" >&2
  go build -trimpath \
    -ldflags "-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=31" \
    -o "$out/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager && mv "$out/kube-controller-manager.tmp" "$out/kube-controller-manager"
fi
s3stamp=$(cat s3server/main.go go.sum | sha256sum | cut -c1-16)
if [ ! -x "$out/s3server" ] || [ "$(cat "$out/s3server.stamp" 2>/dev/null)" != "$s3stamp" ]; then
  echo "building s3server (gofakes3)" >&2
  go build -trimpath -o "$out/s3server.tmp" ./s3server && mv "$out/s3server.tmp" "$out/s3server" && echo "$s3stamp" > "$out/s3server.stamp"
fi
gcsstamp=$(cat gcsserver/main.go gcsserver/go.sum | sha256sum | cut -c1-16)
if [ ! -x "$out/gcsserver" ] || [ "$(cat "$out/gcsserver.stamp" 2>/dev/null)" != "$gcsstamp" ]; then
  echo "building gcsserver (fake-gcs-server; about 2 minutes cold on 2 cores)" >&2
  (cd gcsserver && go build -trimpath -o "$out/gcsserver.tmp" .) && mv "$out/gcsserver.tmp" "$out/gcsserver" && echo "$gcsstamp" > "$out/gcsserver.stamp"
fi
echo "$out"
