//! Evictions (`pods/eviction` CREATE) never reach DELETE webhooks; forcegate
//! gates those asking for grace 0 and leaves graceful ones (drains) alone.

use serde_json::json;

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by, record_name};
use crate::harness::harness;

const WEBHOOK: &str = "eviction.pods.forcegate.dev";

fn eviction(scene: &Scene, pod: &str, grace: Option<i64>) -> (String, String) {
    let mut body = json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": scene.ns},
    });
    if let Some(grace) = grace {
        body["deleteOptions"] = json!({"gracePeriodSeconds": grace});
    }
    (
        format!("/api/v1/namespaces/{}/pods/{pod}/eviction", scene.ns),
        body.to_string(),
    )
}

#[test]
fn grace_zero_eviction_is_gated_and_a_graceful_one_is_not() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "evict");
    let node = scene.node("n1", NodeState::Ready);
    scene.running_pod("api-0", &node, PodSpec::default());

    let (path, grace_zero) = eviction(&scene, "api-0", Some(0));
    let dry_run = format!("{path}?dryRun=All");
    crate::kubectl::eventually(
        "forcegate to see the pod",
        std::time::Duration::from_secs(20),
        || {
            let run = scene
                .k()
                .run_stdin(&["create", "--raw", &dry_run, "-f", "-"], &grace_zero);
            if denied_by(&run, WEBHOOK, "node-alive") {
                Ok(())
            } else {
                Err(run.describe())
            }
        },
    );

    let run = scene
        .k()
        .run_stdin(&["create", "--raw", &path, "-f", "-"], &grace_zero);
    assert!(
        denied_by(&run, WEBHOOK, "node-alive"),
        "a grace-0 eviction of a pod on a Ready node must be denied:\n{}",
        run.describe()
    );
    assert!(
        run.stderr
            .contains("forcegate denied the grace-0 eviction of pod e2e-evict/api-0"),
        "{}",
        run.describe()
    );
    let pod = scene
        .pod("api-0")
        .expect("pod must survive a denied eviction");
    assert!(
        pod.pointer("/metadata/deletionTimestamp").is_none(),
        "{pod:#}"
    );

    // A drain's eviction (the pod's own grace period) is no candidate: the
    // matchCondition keeps it away from forcegate and it goes through.
    let (path, graceful) = eviction(&scene, "api-0", None);
    let run = scene
        .k()
        .run_stdin(&["create", "--raw", &path, "-f", "-"], &graceful);
    assert!(
        run.success(),
        "a graceful eviction must pass:\n{}",
        run.describe()
    );
    let pod = scene
        .pod("api-0")
        .expect("graceful: the kubelet would finish it");
    assert!(
        pod.pointer("/metadata/deletionTimestamp").is_some(),
        "the graceful eviction must start deleting the pod: {pod:#}"
    );
}

#[test]
fn grace_zero_eviction_on_a_fenced_node_is_allowed_and_recorded() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "evictfenced");
    let node = scene.node("n1", NodeState::OutOfService);
    let uid = scene.running_pod("worker-0", &node, PodSpec::default());
    let (path, grace_zero) = eviction(&scene, "worker-0", Some(0));
    let dry_run = format!("{path}?dryRun=All");
    crate::kubectl::eventually(
        "forcegate to see the pod",
        std::time::Duration::from_secs(20),
        || {
            let run = scene
                .k()
                .run_stdin(&["create", "--raw", &dry_run, "-f", "-"], &grace_zero);
            if run.success() {
                Ok(())
            } else {
                Err(run.describe())
            }
        },
    );

    let run = scene
        .k()
        .run_stdin(&["create", "--raw", &path, "-f", "-"], &grace_zero);
    assert!(run.success(), "{}", run.describe());
    assert!(
        scene.pod("worker-0").is_none(),
        "a grace-0 eviction deletes at once"
    );
    let record = scene
        .record(&uid)
        .unwrap_or_else(|| panic!("no ForceDeletion {} for the eviction", record_name(&uid)));
    assert_eq!(
        record.pointer("/spec/action/type").and_then(|v| v.as_str()),
        Some("Eviction")
    );
}
