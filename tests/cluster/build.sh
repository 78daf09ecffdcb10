#!/usr/bin/env bash
# Builds the hermetic test cluster binaries (kube-apiserver, etcd, kubectl and
# the testcluster launcher) from the Go module in this directory into
#
#   <repo>/target/testcluster/<key>/bin/
#
# where <key> hashes go.mod, go.sum, every Go source file of the module, this
# script and the Go toolchain version. When that directory already holds all
# four binaries nothing is built. The bin directory (absolute path) is printed
# on stdout as the last line; everything else goes to stderr.
#
# Environment:
#   TESTCLUSTER_BUILD_JOBS  go build -p value (default 2)
#   TESTCLUSTER_OUT_ROOT    root of the cache (default <repo>/target/testcluster)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out_root="${TESTCLUSTER_OUT_ROOT:-$root/target/testcluster}"

# Version metadata stamped into kube-apiserver and kubectl (what /version and
# `kubectl version` report). Keep in
# step with the k8s.io/kubernetes requirement in go.mod.
k8s_version="v1.36.3"

log() { printf 'build.sh: %s\n' "$*" >&2; }

if ! command -v go >/dev/null 2>&1; then
	log "error: the go toolchain is not on PATH (need Go >= $(sed -n 's/^go //p' "$here/go.mod"))"
	exit 1
fi

cd "$here"
go_version="$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)"

key="$(
	{
		echo "$go_version"
		echo "$k8s_version"
		sha256sum go.mod go.sum build.sh
		find cmd -type f -name '*.go' | LC_ALL=C sort | xargs sha256sum
	} | sha256sum | cut -c1-16
)"
dest="$out_root/$key"
bins=(kube-apiserver etcd kubectl testcluster)

have_all() {
	local b
	for b in "${bins[@]}"; do
		[[ -x "$dest/bin/$b" ]] || return 1
	done
}

if have_all; then
	log "cached: $dest/bin"
	echo "$dest/bin"
	exit 0
fi

mkdir -p "$out_root"
tmp="$(mktemp -d "$out_root/.build.$key.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

log "building kube-apiserver and kubectl $k8s_version, etcd and testcluster ($go_version) into $dest/bin"
start=$SECONDS
mkdir -p "$tmp/bin"
# CGO off and -trimpath, no VCS stamping: the same inputs give the same binaries
# on any machine (upstream also builds kube-apiserver with CGO_ENABLED=0).
CGO_ENABLED=0 go build \
	-p "${TESTCLUSTER_BUILD_JOBS:-2}" \
	-mod=readonly \
	-trimpath \
	-buildvcs=false \
	-ldflags="-s -w -buildid= \
-X k8s.io/component-base/version.gitVersion=$k8s_version \
-X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=36 \
-X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z \
-X k8s.io/client-go/pkg/version.gitVersion=$k8s_version \
-X k8s.io/client-go/pkg/version.gitMajor=1 \
-X k8s.io/client-go/pkg/version.gitMinor=36" \
	-o "$tmp/bin/" \
	./cmd/kube-apiserver ./cmd/etcd ./cmd/kubectl ./cmd/testcluster >&2

# Publish atomically: a concurrent build of the same key may have won the race;
# its result is equivalent, so keep whichever landed first.
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	have_all || { log "error: $dest exists but is incomplete; remove it and retry"; exit 1; }
fi
log "built in $((SECONDS - start))s"
echo "$dest/bin"
