//! `kubectl delete pod --force --grace-period=0` through the real API server.

use std::thread;
use std::time::Duration;

use serde_json::Value;

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by, record_name};
use crate::harness::harness;
use crate::kubectl::eventually;

const WEBHOOK: &str = "force-delete.pods.forcegate.dev";

/// A StatefulSet pod holding an unexpired Lease on an unreachable (not
/// fenced) node.
pub fn leader(scene: &Scene) -> (String, String) {
    leader_on(scene, NodeState::Unreachable)
}

/// A StatefulSet pod holding an unexpired Lease on a node in `state`;
/// returns the node and the pod's UID.
pub fn leader_on(scene: &Scene, state: NodeState) -> (String, String) {
    let node = scene.node("n1", state);
    let owner = scene.stateful_set("db");
    let uid = scene.running_pod(
        "db-0",
        &node,
        PodSpec {
            owner: Some(owner),
            labels: vec![("app".into(), "db".into())],
            ..PodSpec::default()
        },
    );
    scene.lease("db-leader", "db-0", 3600);
    (node, uid)
}

pub fn force_delete<'a>(pod: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "delete",
        "pod",
        pod,
        "--force",
        "--grace-period=0",
        "--wait=false",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn statefulset_leader_on_unfenced_node_is_denied_with_forcegates_message() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "leader");
    let (node, uid) = leader(&scene);
    scene.until_forcegate_sees(&force_delete("db-0", &["--dry-run=server"]), |run| {
        denied_by(run, WEBHOOK, "statefulset-leader")
    });

    let run = scene.run(&force_delete("db-0", &[]));
    assert!(
        denied_by(&run, WEBHOOK, "statefulset-leader"),
        "expected forcegate's statefulset-leader denial:\n{}",
        run.describe()
    );
    for expected in [
        "Forbidden",
        "forcegate denied the force deletion of pod e2e-leader/db-0",
        "db-leader",
        "split brain",
        &format!(
            "kubectl taint node {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
        ),
    ] {
        assert!(
            run.stderr.contains(expected),
            "kubectl should show {expected:?}:\n{}",
            run.describe()
        );
    }
    let pod = scene.pod("db-0").expect("the denied pod must still exist");
    assert!(pod.pointer("/metadata/deletionTimestamp").is_none());
    assert!(
        scene.record(&uid).is_none(),
        "a denial must not record a cleanup"
    );
}

#[test]
fn kubelet_of_the_pods_own_node_finishes_the_delete() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "kubelet");
    let (node, uid) = leader(&scene);
    // The same delete by a human is denied: forcegate sees the leader.
    scene.until_forcegate_sees(&force_delete("db-0", &["--dry-run=server"]), |run| {
        denied_by(run, WEBHOOK, "statefulset-leader")
    });

    let user = format!("--as=system:node:{node}");
    let run = scene.run(&force_delete(
        "db-0",
        &[
            &user,
            "--as-group=system:nodes",
            "--as-group=system:authenticated",
        ],
    ));
    assert!(
        run.success(),
        "the kubelet's own grace-0 delete must pass:\n{}",
        run.describe()
    );
    assert!(scene.pod("db-0").is_none(), "the pod must be gone");
    assert!(
        scene.record(&uid).is_none(),
        "the kubelet finishing its pod is not a force deletion: no record"
    );
}

#[test]
fn fenced_node_force_delete_is_allowed_with_warnings_and_its_record_turns_clean() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "fenced");
    let node = scene.node("n1", NodeState::OutOfService);
    let owner = scene.stateful_set("web");
    let attachment = scene.attached_volume("data-web-0", &node);
    let uid = scene.running_pod(
        "web-0",
        &node,
        PodSpec {
            owner: Some(owner),
            claims: vec!["data-web-0".into()],
            ..PodSpec::default()
        },
    );
    scene.until_forcegate_sees(&force_delete("web-0", &["--dry-run=server"]), |run| {
        run.success() && run.stderr.contains("forcegate record-force-deletions")
    });

    let run = scene.run(&force_delete("web-0", &[]));
    assert!(
        run.success(),
        "a force delete on a fenced node must pass:\n{}",
        run.describe()
    );
    let record = record_name(&uid);
    for expected in [
        "Warning: forcegate record-force-deletions:",
        &format!("on node {node} was not shut down by its kubelet"),
        &format!("cleanup record {record}"),
    ] {
        assert!(
            run.stderr.contains(expected),
            "kubectl should show the warning {expected:?}:\n{}",
            run.describe()
        );
    }
    assert!(scene.pod("web-0").is_none(), "the pod must be gone");

    // The record names the pod, its node, the requester and the volume, and
    // stays open while the VolumeAttachment is there.
    let open = eventually(
        "the record to be verified once",
        Duration::from_secs(30),
        || {
            let record = scene.record(&uid).ok_or("no ForceDeletion yet")?;
            match phase(&record) {
                "Verifying" => Ok(record),
                other => Err(format!("phase {other:?}: {record:#}")),
            }
        },
    );
    assert_eq!(
        open.pointer("/spec/object/uid").and_then(Value::as_str),
        Some(uid.as_str())
    );
    assert_eq!(
        open.pointer("/spec/node").and_then(Value::as_str),
        Some(node.as_str())
    );
    assert_eq!(
        open.pointer("/spec/requester/username")
            .and_then(Value::as_str),
        Some("testcluster-admin")
    );
    assert_eq!(
        open.pointer("/spec/volumes/0/attachments/0/name")
            .and_then(Value::as_str),
        Some(attachment.as_str())
    );
    let detached = checklist_item(&open, "volume-detached/");
    assert_eq!(detached["state"], "pending", "{open:#}");

    scene.k().ok(&["delete", "volumeattachment", &attachment]);
    let clean = eventually("the record to turn Clean", Duration::from_secs(45), || {
        let record = scene.record(&uid).ok_or("record vanished")?;
        match phase(&record) {
            "Clean" => Ok(record),
            other => Err(format!("phase {other:?}: {record:#}")),
        }
    });
    assert_eq!(
        checklist_item(&clean, "volume-detached/")["state"],
        "ok",
        "{clean:#}"
    );
    assert_eq!(
        checklist_item(&clean, "object-gone")["state"],
        "ok",
        "{clean:#}"
    );

    // The verifier says so in an Event (RBAC: Role forcegate-events).
    eventually(
        "a Clean event for the record",
        Duration::from_secs(20),
        || {
            let events = scene
                .k()
                .get(&["-n", "default", "events.events.k8s.io"])
                .ok_or("no events")?;
            let found = events["items"].as_array().into_iter().flatten().any(|e| {
                e.pointer("/regarding/name").and_then(Value::as_str) == Some(record.as_str())
                    && e["reason"] == "Clean"
            });
            if found {
                Ok(())
            } else {
                Err(format!("{events:#}"))
            }
        },
    );
}

#[test]
fn active_job_pod_on_unfenced_node_is_denied() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "job");
    let node = scene.node("n1", NodeState::Unreachable);
    let (owner, job) = scene.active_cron_job("nightly");
    let uid = scene.running_pod(
        "nightly-run",
        &node,
        PodSpec {
            owner: Some(owner),
            ..PodSpec::default()
        },
    );
    scene.until_forcegate_sees(&force_delete("nightly-run", &["--dry-run=server"]), |run| {
        denied_by(run, WEBHOOK, "job-state")
    });

    let run = scene.run(&force_delete("nightly-run", &[]));
    assert!(denied_by(&run, WEBHOOK, "job-state"), "{}", run.describe());
    for expected in [
        &format!("belongs to Job {job}"),
        "CronJob nightly",
        "duplicate run",
    ] {
        assert!(
            run.stderr.contains(expected),
            "kubectl should show {expected:?}:\n{}",
            run.describe()
        );
    }
    assert!(
        scene.pod("nightly-run").is_some(),
        "the denied pod must still exist"
    );
    assert!(scene.record(&uid).is_none());
}

#[test]
fn server_side_dry_run_decides_but_records_nothing() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "dryrun");
    let node = scene.node("n1", NodeState::OutOfService);
    let uid = scene.running_pod("batch-0", &node, PodSpec::default());

    let run = scene.until_forcegate_sees(&force_delete("batch-0", &["--dry-run=server"]), |run| {
        run.success() && run.stderr.contains("forcegate record-force-deletions")
    });
    assert!(
        run.stderr.contains("dry run: nothing recorded"),
        "the warning should say nothing was recorded:\n{}",
        run.describe()
    );
    // Records are written synchronously inside the admission call; give a
    // wrong implementation a moment anyway before looking.
    thread::sleep(Duration::from_secs(2));
    assert!(scene.pod("batch-0").is_some(), "a dry run must not delete");
    assert!(
        scene.record(&uid).is_none(),
        "a dry run (sideEffects: NoneOnDryRun) must not write a ForceDeletion"
    );

    // The same request for real does record: the dry run was not simply ignored.
    let run = scene.run(&force_delete("batch-0", &[]));
    assert!(run.success(), "{}", run.describe());
    assert!(scene.record(&uid).is_some(), "the real delete must record");
}

fn phase(record: &Value) -> &str {
    record
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn checklist_item<'a>(record: &'a Value, prefix: &str) -> &'a Value {
    record
        .pointer("/status/checklist")
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .find(|i| i["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
        })
        .unwrap_or_else(|| panic!("no checklist item {prefix}* in {record:#}"))
}
