//! Cleanup costs on the admission path and in the verifier.
//!
//! `journal_record`: one create of a new record in the standalone journal,
//! including `fdatasync` (paid inside the admission call's record budget).
//! `journal_record_existing`: the retried second admission call (no I/O).
//! `checklist_evaluate`: one verifier evaluation of a pod record.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use forcegate::cleanup::checklist;
use forcegate::cleanup::{ForceDeletionSpec, JournalRecorder};
use forcegate::cluster::SnapshotCluster;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

fn spec(i: u64) -> ForceDeletionSpec {
    serde_json::from_value(json!({
        "subject": "Pod db/web-0",
        "object": {"version": "v1", "kind": "Pod", "resource": "pods", "namespace": "db",
                   "name": "web-0", "uid": format!("00000000-0000-4000-8000-{i:012}")},
        "action": {"type": "ForceDelete", "objectDeleting": true},
        "node": "worker-1",
        "podIPs": ["10.244.1.17"],
        "volumes": [{"claim": "data-web-0", "persistentVolume": "pvc-7d1c", "accessModes": ["ReadWriteOnce"],
                     "attachments": [{"name": "csi-4e1b", "node": "worker-1", "attached": true}]}],
        "leases": [{"namespace": "db", "name": "web-leader", "holder": "web-0_8f3a", "expired": false}],
        "owners": [{"kind": "StatefulSet", "name": "web"}],
        "requester": {"username": "alice@example.com", "groups": ["oncall"]},
        "requestedAt": "2026-03-02T10:00:00Z",
        "policies": [{"policy": "node-alive", "action": "Record", "fact": "facts.node.ready == false"}]
    }))
    .expect("spec")
}

const CLUSTER: &str = r#"apiVersion: v1
kind: Node
metadata: {name: worker-1}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: csi-4e1b}
spec: {attacher: ebs.csi.aws.com, nodeName: worker-1, source: {persistentVolumeName: pvc-7d1c}}
status: {attached: true}
"#;

fn journal(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = JournalRecorder::open(dir.path().join("bench.journal")).expect("journal");
    let mut i = 0u64;
    c.bench_function("journal_record", |b| {
        b.iter(|| {
            i += 1;
            black_box(journal.record_blocking(spec(i)).expect("record"))
        })
    });
    c.bench_function("journal_record_existing", |b| {
        b.iter(|| black_box(journal.record_blocking(spec(1)).expect("record")))
    });
}

fn evaluate(c: &mut Criterion) {
    let view = SnapshotCluster::from_yaml_str(CLUSTER).expect("snapshot");
    let spec = spec(1);
    let now = Timestamp::now();
    c.bench_function("checklist_evaluate", |b| {
        b.iter(|| black_box(checklist::evaluate(&spec, &view, now)))
    });
}

criterion_group!(benches, journal, evaluate);
criterion_main!(benches);
