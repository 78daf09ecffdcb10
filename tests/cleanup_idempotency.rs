//! The same grace-0 DELETE admitted twice (the API server's store retries)
//! writes one ForceDeletion record, through the whole engine.

use std::sync::Arc;

use arc_swap::ArcSwap;
use forcegate::cleanup::{JournalRecorder, NoopRecorder, Recorder, record_name};
use forcegate::cluster::SnapshotCluster;
use forcegate::engine::{Endpoint, Engine, Settings};
use forcegate::policy::PolicySet;
use serde_json::json;

const POD_UID: &str = "9d2c6f5e-0a41-4b8e-bb0e-5c7e1d2a9f30";

const POLICY: &str = r#"apiVersion: forcegate.dev/v1alpha1
kind: ForceDeletionPolicy
metadata:
  name: record-force-deletes
spec:
  match:
    intents: [ForceDelete]
  onUnknown: Ignore
  action: Record
  message: force deletion recorded for verification
"#;

const CLUSTER: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: worker-1
spec: {}
status:
  conditions:
  - type: Ready
    status: Unknown
    reason: NodeStatusUnknown
    lastHeartbeatTime: "2026-03-02T09:40:00Z"
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: db
  uid: 9d2c6f5e-0a41-4b8e-bb0e-5c7e1d2a9f30
  deletionTimestamp: "2026-03-02T09:59:00Z"
spec:
  nodeName: worker-1
  containers:
  - name: web
    image: nginx:1.27
status:
  phase: Running
  podIP: 10.244.1.17
  podIPs:
  - ip: 10.244.1.17
"#;

fn pod() -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "db", "uid": POD_UID,
                     "deletionTimestamp": "2026-03-02T09:59:00Z"},
        "spec": {"nodeName": "worker-1", "containers": [{"name": "web", "image": "nginx:1.27"}]},
        "status": {"phase": "Running", "podIP": "10.244.1.17", "podIPs": [{"ip": "10.244.1.17"}]}
    })
}

/// `kubectl delete pod web-0 -n db --force --grace-period=0`, as the webhook sees it.
fn force_delete(review_uid: &str, dry_run: bool) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": review_uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "web-0", "namespace": "db", "operation": "DELETE",
            "userInfo": {"username": "alice@example.com", "groups": ["oncall", "system:authenticated"]},
            "object": null,
            "oldObject": pod(),
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            "dryRun": dry_run
        }
    }))
    .expect("review json")
}

fn engine(recorder: Arc<dyn Recorder>) -> Engine {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("record.yaml"), POLICY).expect("policy");
    let policies = PolicySet::load_dir(dir.path()).expect("policies load");
    let cluster = SnapshotCluster::from_yaml_str(CLUSTER).expect("snapshot");
    Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        Arc::new(cluster),
        recorder,
        Settings::default(),
    )
}

fn journal_lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .expect("journal")
        .lines()
        .count()
}

#[tokio::test]
async fn the_same_delete_admitted_twice_writes_one_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("forcegate.journal");
    let journal = JournalRecorder::open(&path).expect("journal");
    let engine = engine(Arc::new(journal.clone()));

    let first = engine
        .admit(
            &force_delete("3b0e7a52-1111-4c1e-9a0f-000000000001", false),
            Endpoint::Validate,
        )
        .await
        .expect("first admission");
    let second = engine
        .admit(
            &force_delete("3b0e7a52-2222-4c1e-9a0f-000000000002", false),
            Endpoint::Validate,
        )
        .await
        .expect("second admission");

    let expected = record_name(POD_UID);
    assert!(first.decision.allowed, "{:?}", first.decision);
    assert!(first.decision.record, "{:?}", first.decision);
    assert_eq!(first.record.as_deref(), Some(expected.as_str()));
    assert_eq!(second.record.as_deref(), Some(expected.as_str()));
    assert_eq!(journal_lines(&path), 1, "one line for two admissions");
    let records = journal.records();
    assert_eq!(records.len(), 1);
    let spec = &records[0].spec;
    assert_eq!(spec.object.uid.as_deref(), Some(POD_UID));
    assert_eq!(spec.node.as_deref(), Some("worker-1"));
    assert_eq!(spec.requester.username, "alice@example.com");
    assert!(
        spec.policies
            .iter()
            .any(|p| p.policy.starts_with("record-force-deletes"))
    );

    // And after a restart, a third call still finds the record.
    drop(engine);
    drop(journal);
    let reopened = JournalRecorder::open(&path).expect("reopen");
    let engine = self::engine(Arc::new(reopened));
    let third = engine
        .admit(
            &force_delete("3b0e7a52-3333-4c1e-9a0f-000000000003", false),
            Endpoint::Validate,
        )
        .await
        .expect("third admission");
    assert_eq!(third.record.as_deref(), Some(expected.as_str()));
    assert_eq!(journal_lines(&path), 1);
}

#[tokio::test]
async fn a_dry_run_records_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("forcegate.journal");
    let engine = engine(Arc::new(JournalRecorder::open(&path).expect("journal")));
    let admitted = engine
        .admit(
            &force_delete("3b0e7a52-4444-4c1e-9a0f-000000000004", true),
            Endpoint::Validate,
        )
        .await
        .expect("admission");
    assert!(admitted.decision.allowed);
    assert!(admitted.record.is_none());
    assert_eq!(journal_lines(&path), 0);
}

#[tokio::test]
async fn review_names_the_same_record_without_writing() {
    let engine = engine(Arc::new(NoopRecorder));
    let admitted = engine
        .admit(
            &force_delete("3b0e7a52-5555-4c1e-9a0f-000000000005", false),
            Endpoint::Validate,
        )
        .await
        .expect("admission");
    assert_eq!(admitted.record, Some(record_name(POD_UID)));
}
