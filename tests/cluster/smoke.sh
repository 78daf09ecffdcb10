#!/usr/bin/env bash
# Smoke test of the test cluster: build (or reuse) the binaries, start a
# cluster the way the Rust e2e harness does (read KUBECONFIG= from the
# launcher's stdout), drive it with the matching kubectl through the things
# forcegate's e2e scenarios rely on, stop it, and check nothing is left
# running. Exits non-zero on the first failed check.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$("$here/build.sh" | tail -n 1)"
state="$(mktemp -d "${TMPDIR:-/tmp}/testcluster-smoke.XXXXXX")"
out="$state.stdout"
launcher=""

cleanup() {
	if [[ -n "$launcher" ]] && kill -0 "$launcher" 2>/dev/null; then
		kill -TERM "$launcher" 2>/dev/null || true
		wait "$launcher" 2>/dev/null || true
	fi
	rm -rf "$state" "$out"
}
trap cleanup EXIT

step() { printf 'smoke: %s\n' "$*" >&2; }
fail() { printf 'smoke: FAILED: %s\n' "$*" >&2; exit 1; }

start=$SECONDS
"$bin/testcluster" --state-dir "$state/cluster" >"$out" </dev/null &
launcher=$!
kubeconfig=""
while [[ -z "$kubeconfig" ]]; do
	kill -0 "$launcher" 2>/dev/null || fail "launcher exited before the cluster was ready"
	kubeconfig="$(sed -n 's/^KUBECONFIG=//p' "$out")"
	[[ -n "$kubeconfig" ]] || sleep 0.2
	((SECONDS - start < 300)) || fail "cluster not ready after 300s"
done
step "cluster ready in $((SECONDS - start))s: $(grep '^APISERVER=' "$out")"

k() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }
node=(--as=system:node:n1 --as-group=system:nodes --as-group=system:authenticated)
# expect_fail PATTERN CMD...: CMD must fail and print PATTERN.
expect_fail() {
	local pattern="$1" msg
	shift
	if msg="$("$@" 2>&1)"; then fail "expected failure: $*"; fi
	grep -q -- "$pattern" <<<"$msg" || fail "expected '$pattern' from: $* -- got: $msg"
}

step "versions"
k version
[[ "$(k get --raw /readyz)" == ok ]] || fail "/readyz"

step "namespace, Node, Pod bound to the node, status patch"
k create namespace smoke
k create -f - <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1}
spec: {}
EOF
for p in p1 p2 p3; do
	k create -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $p, namespace: smoke}
spec:
  nodeName: n1
  containers: [{name: c, image: example.invalid/none}]
EOF
done
k -n smoke patch pod p1 --subresource=status --type=merge \
	-p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}'
[[ "$(k -n smoke get pod p1 -o jsonpath='{.status.phase}')" == Running ]] || fail "status patch"

step "graceful delete stays pending (no kubelet); force delete removes the pod"
k -n smoke delete pod p1 --wait=false
[[ -n "$(k -n smoke get pod p1 -o jsonpath='{.metadata.deletionTimestamp}')" ]] || fail "no deletionTimestamp"
k -n smoke delete pod p1 --force --grace-period=0
expect_fail NotFound k -n smoke get pod p1

step "impersonating the kubelet of n1 (Node authorizer + NodeRestriction)"
k -n smoke get pod p2 "${node[@]}"
k -n smoke delete pod p2 --force --grace-period=0 "${node[@]}"
k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: smoke}
spec:
  nodeName: n2
  containers: [{name: c, image: example.invalid/none}]
EOF
expect_fail "can only delete pods with spec.nodeName set to itself" \
	k -n smoke delete pod other --force --grace-period=0 "${node[@]}"
expect_fail Forbidden k -n smoke get pods --as=alice

step "service-account tokens are issued and accepted"
k -n smoke create serviceaccount robot
token="$(k -n smoke create token robot --duration=10m)"
whoami="$("$bin/kubectl" --kubeconfig=/dev/null --token "$token" \
	--server "$(sed -n 's/^APISERVER=//p' "$out")" --certificate-authority "$(sed -n 's/^CA_FILE=//p' "$out")" \
	auth whoami -o jsonpath='{.status.userInfo.username}')"
[[ "$whoami" == system:serviceaccount:smoke:robot ]] || fail "token identity: $whoami"

step "server-side dry-run of a webhook configuration with CEL matchConditions"
vwc="$state/vwc.yaml"
cat >"$vwc" <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: smoke
webhooks:
- name: pods.smoke.forcegate.dev
  admissionReviewVersions: ["v1"]
  sideEffects: NoneOnDryRun
  timeoutSeconds: 5
  failurePolicy: Fail
  clientConfig:
    url: https://127.0.0.1:9/validate
  rules:
  - operations: ["DELETE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
  matchConditions:
  - name: not-nodes
    expression: "!('system:nodes' in request.userInfo.groups)"
  - name: grace-zero
    expression: "has(request.options) && has(request.options.gracePeriodSeconds) && request.options.gracePeriodSeconds == 0"
EOF
k apply --dry-run=server -f "$vwc"
sed 's/gracePeriodSeconds == 0"/gracePeriodSeconds + 0"/' "$vwc" >"$state/bad.yaml"
expect_fail "compilation failed" k apply --dry-run=server -f "$state/bad.yaml"
expect_fail NotFound k get validatingwebhookconfiguration smoke

step "webhook registered for real: grace-0 delete by admin fails closed, kubelet bypasses it"
k apply -f "$vwc"
expect_fail 'failed calling webhook "pods.smoke.forcegate.dev"' \
	k -n smoke delete pod p3 --force --grace-period=0
k -n smoke delete pod p3 --force --grace-period=0 "${node[@]}"
k delete validatingwebhookconfiguration smoke

step "stop"
kill -TERM "$launcher"
rc=0
wait "$launcher" || rc=$?
launcher=""
[[ $rc -eq 0 ]] || fail "launcher exit status $rc"
if pgrep -af "^$bin/"; then fail "processes left running"; fi
step "OK in $((SECONDS - start))s"
