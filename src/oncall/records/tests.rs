use std::path::PathBuf;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::cleanup::{
    ForceDeletionSpec, ForceDeletionStatus, ObjectReference, RecordedAction, RecordedRequester,
};
use crate::cluster::SnapshotCluster;

const DEADLINE: Duration = Duration::from_secs(900);

fn record(name: &str, pod: &str, uid: &str, requested: &str) -> ForceDeletion {
    let spec = ForceDeletionSpec {
        subject: format!("Pod data/{pod}"),
        object: ObjectReference {
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            namespace: Some("data".into()),
            name: pod.into(),
            uid: Some(uid.into()),
            ..ObjectReference::default()
        },
        action: RecordedAction {
            type_: "ForceDelete".into(),
            removed_finalizers: Vec::new(),
            object_deleting: true,
        },
        node: Some("worker-3".into()),
        pod_ips: vec!["10.244.3.7".into()],
        volumes: Vec::new(),
        leases: Vec::new(),
        owners: Vec::new(),
        job: None,
        requester: RecordedRequester {
            username: "alice".into(),
            groups: Vec::new(),
        },
        break_glass_reason: None,
        requested_at: Time(requested.parse().expect("time")),
        policies: Vec::new(),
    };
    ForceDeletion::new(name, spec)
}

fn snapshot() -> SnapshotCluster {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    SnapshotCluster::load(&[root.join("examples/cluster")]).expect("snapshot")
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("time")
}

#[test]
fn journal_records_are_verified_now_against_the_view() {
    let view = snapshot();
    // db-2 is still in the snapshot with the recorded UID: not gone yet.
    let uid = "5bac4e8a-3f6d-4abc-9d7e-2c4f6b8a0d03";
    let records = [record("fd-a", "db-2", uid, "2025-06-01T12:00:00Z")];
    let early = list(
        &records,
        None,
        Some(&view),
        at("2025-06-01T12:01:00Z"),
        DEADLINE,
    );
    assert_eq!(early.len(), 1);
    assert_eq!(early[0].verified, Verified::Now);
    assert_eq!(early[0].phase, Phase::Verifying, "{:#?}", early[0]);
    assert!(
        early[0].open.contains(&"object-gone".to_owned()),
        "{:?}",
        early[0].open
    );
    assert!(
        early[0]
            .items
            .iter()
            .any(|i| i.name == "node/sandbox" && i.command.is_some())
    );
    let late = list(
        &records,
        None,
        Some(&view),
        at("2025-06-01T13:00:00Z"),
        DEADLINE,
    );
    assert_eq!(late[0].phase, Phase::NeedsAttention);
    assert!(late[0].needs_attention());
}

#[test]
fn without_a_view_journal_records_show_as_written() {
    let records = [record("fd-a", "db-2", "u", "2025-06-01T12:00:00Z")];
    let summary = &list(&records, None, None, at("2025-06-01T12:01:00Z"), DEADLINE)[0];
    assert_eq!(
        (summary.phase, summary.verified),
        (Phase::Pending, Verified::No)
    );
    assert_eq!(summary.age_seconds, 60);
}

#[test]
fn the_verifiers_status_wins_and_phases_filter() {
    let mut attention = record("fd-b", "db-0", "u-0", "2025-06-01T11:00:00Z");
    attention.status = Some(ForceDeletionStatus {
        phase: Phase::NeedsAttention,
        checklist: vec![ChecklistItem {
            name: "no-split-brain".into(),
            state: ItemState::Failed,
            message: "split brain risk".into(),
            command: Some("kubectl taint nodes worker-2 ...".into()),
        }],
        ..ForceDeletionStatus::default()
    });
    let mut clean = record("fd-c", "db-1", "u-1", "2025-06-01T11:30:00Z");
    clean.status = Some(ForceDeletionStatus {
        phase: Phase::Clean,
        ..ForceDeletionStatus::default()
    });
    let records = [attention, clean];
    let now = at("2025-06-01T12:00:00Z");
    let all = list(&records, None, None, now, DEADLINE);
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fd-c", "fd-b"], "newest first");
    assert_eq!(all[1].verified, Verified::ByVerifier);
    assert_eq!(all[1].open, ["no-split-brain"]);
    let filtered = list(
        &records,
        Some(parse_phase("needsattention").expect("phase")),
        None,
        now,
        DEADLINE,
    );
    assert_eq!(filtered.len(), 1);
    assert!(filtered[0].needs_attention());
    assert!(!all[0].needs_attention());
    assert!(parse_phase("Dirty").is_err());
    let detail = show(&records, "fd-b", None, now, DEADLINE).expect("found");
    assert_eq!(detail.items.len(), 1);
    assert!(show(&records, "fd-x", None, now, DEADLINE).is_err());
}
