//! forcegate down: the validating webhooks fail closed (failurePolicy Fail,
//! docs/operations.md), but only for candidates — matchConditions keep the
//! kubelet, graceful deletes, drains and the API server's own grace-0
//! deletes of unscheduled pods away from the webhook.

use serde_json::json;

use crate::fixtures::{NodeState, PodSpec, Scene};
use crate::harness::{harness, http_get};

fn failed_calling(run: &crate::kubectl::Run, webhook: &str) -> bool {
    !run.success()
        && run
            .stderr
            .contains(&format!("failed calling webhook \"{webhook}\""))
}

#[test]
fn with_forcegate_down_candidates_fail_closed_and_everything_else_proceeds() {
    let h = harness();
    // Objects first: their creation is never gated either way.
    let scene = Scene::new(h, "outage");
    let node = scene.node("n1", NodeState::Ready);
    scene.running_pod("a", &node, PodSpec::default());
    scene.running_pod("b", &node, PodSpec::default());
    scene.human("carol");
    scene.ok(&["create", "configmap", "plain"]);
    scene.k().create(&json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "unscheduled", "namespace": scene.ns},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]},
    }));

    let outage = h.outage();
    assert!(
        http_get(h.metrics_port, "/readyz").is_err(),
        "forcegate must be down for this test"
    );

    // Candidates fail closed, each at its own webhook.
    let run = scene.run(&[
        "delete",
        "pod",
        "a",
        "--force",
        "--grace-period=0",
        "--wait=false",
    ]);
    assert!(
        failed_calling(&run, "force-delete.pods.forcegate.dev"),
        "a human's force delete must fail closed:\n{}",
        run.describe()
    );
    assert!(scene.pod("a").is_some(), "the pod must survive");
    let eviction = json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "b", "namespace": scene.ns},
        "deleteOptions": {"gracePeriodSeconds": 0},
    });
    let path = format!("/api/v1/namespaces/{}/pods/b/eviction", scene.ns);
    let run = scene.k().run_stdin(
        &["create", "--raw", &path, "-f", "-"],
        &eviction.to_string(),
    );
    assert!(
        failed_calling(&run, "eviction.pods.forcegate.dev"),
        "a grace-0 eviction must fail closed:\n{}",
        run.describe()
    );
    let run = scene.run(&[
        "patch",
        "pod",
        "b",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    assert!(
        run.success(),
        "adding a finalizer is no candidate:\n{}",
        run.describe()
    );
    let run = scene.run(&[
        "patch",
        "pod",
        "b",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
        "--as=carol",
    ]);
    assert!(
        failed_calling(&run, "finalizers.forcegate.dev"),
        "a finalizer strip must fail closed:\n{}",
        run.describe()
    );

    // Everything else proceeds: ordinary updates, graceful deletes, the
    // kubelet finishing them with grace 0, unscheduled pods.
    scene.ok(&["label", "configmap", "plain", "touched=yes"]);
    scene.ok(&["delete", "pod", "a", "--wait=false"]);
    let terminating = scene.pod("a").expect("graceful: waits for the kubelet");
    assert!(terminating.pointer("/metadata/deletionTimestamp").is_some());
    let run = scene.run(&[
        "delete",
        "pod",
        "a",
        "--force",
        "--grace-period=0",
        &format!("--as=system:node:{node}"),
        "--as-group=system:nodes",
        "--as-group=system:authenticated",
    ]);
    assert!(
        run.success(),
        "the kubelet's grace-0 delete must not depend on forcegate:\n{}",
        run.describe()
    );
    assert!(scene.pod("a").is_none());
    let run = scene.run(&[
        "delete",
        "pod",
        "unscheduled",
        "--force",
        "--grace-period=0",
    ]);
    assert!(
        run.success(),
        "an unscheduled pod's delete is no candidate:\n{}",
        run.describe()
    );

    drop(outage);
    let (status, body) = http_get(h.metrics_port, "/readyz").expect("forcegate restarted");
    assert_eq!(status, 200, "{body}");
}
