#!/usr/bin/env bash
# Builds one test tool from the Go module proxy into
#
#   <repo>/target/tools/<key>/bin/<tool>
#
# Tools (each a Go module in tests/tools/<tool>/ whose go.mod pins it with a
# `tool` directive and whose go.sum pins every dependency):
#
#   promtool            github.com/prometheus/prometheus/cmd/promtool
#                       (-tags remove_all_sd: no cloud service discovery,
#                       which promtool's rule checks and tests never use)
#   kube-state-metrics  k8s.io/kube-state-metrics/v2
#   helm                helm.sh/helm/v4/cmd/helm (charts/forcegate: lint,
#                       template, tests)
#
# <key> hashes the tool's go.mod and go.sum, this script and the Go
# toolchain version. When the binary is already there nothing is built. The
# bin directory (absolute path) is printed on stdout as the last line;
# everything else goes to stderr.
#
# Usage: tests/tools/build.sh promtool|kube-state-metrics|helm
#
# Environment:
#   TOOLS_BUILD_JOBS  go build -p value (default 2)
#   TOOLS_OUT_ROOT    root of the cache (default <repo>/target/tools)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out_root="${TOOLS_OUT_ROOT:-$root/target/tools}"

log() { printf 'tools/build.sh: %s\n' "$*" >&2; }

tool="${1:-}"
case "$tool" in
promtool)
	module=github.com/prometheus/prometheus
	package=$module/cmd/promtool
	tags=remove_all_sd
	;;
kube-state-metrics)
	module=k8s.io/kube-state-metrics/v2
	package=$module
	tags=
	;;
helm)
	module=helm.sh/helm/v4
	package=$module/cmd/helm
	tags=
	;;
*)
	log "usage: $0 promtool|kube-state-metrics|helm"
	exit 2
	;;
esac

if ! command -v go >/dev/null 2>&1; then
	log "error: the go toolchain is not on PATH (need Go >= $(sed -n 's/^go //p' "$here/$tool/go.mod"))"
	exit 1
fi

cd "$here/$tool"
go_version="$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)"
key="$(
	{
		echo "$go_version"
		echo "$tool $tags"
		sha256sum go.mod go.sum "$here/build.sh"
	} | sha256sum | cut -c1-16
)"
dest="$out_root/$key"

if [[ -x "$dest/bin/$tool" ]]; then
	log "cached: $dest/bin/$tool"
	echo "$dest/bin"
	exit 0
fi

mkdir -p "$out_root"
tmp="$(mktemp -d "$out_root/.build.$key.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

log "building $tool ($(go list -m -mod=readonly "$module"), $go_version) into $dest/bin"
start=$SECONDS
mkdir -p "$tmp/bin"
# The same flags as tests/cluster/build.sh: CGO off, -trimpath, no VCS or
# build id, so the same inputs give the same binary on any machine.
CGO_ENABLED=0 go build \
	-p "${TOOLS_BUILD_JOBS:-2}" \
	-mod=readonly \
	-trimpath \
	-buildvcs=false \
	-tags "$tags" \
	-ldflags="-s -w -buildid=" \
	-o "$tmp/bin/$tool" \
	"$package" >&2

# Publish atomically: a concurrent build of the same key may have won.
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	[[ -x "$dest/bin/$tool" ]] || {
		log "error: $dest exists but has no $tool; remove it and retry"
		exit 1
	}
fi
log "built in $((SECONDS - start))s"
echo "$dest/bin"
