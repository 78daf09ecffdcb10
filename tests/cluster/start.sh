#!/usr/bin/env bash
# Builds the test cluster binaries if needed (see build.sh), then replaces
# itself with the testcluster launcher, passing all arguments through. The
# launcher prints KEY=VALUE lines on stdout once the API server is ready,
# KUBECONFIG=<path> last, and runs until SIGTERM/SIGINT/SIGHUP or until its
# parent process exits. See README.md for the protocol.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$("$here/build.sh" | tail -n 1)"
exec "$bin/testcluster" "$@"
