//! Facts gathered from realistic kubectl-shaped snapshots: the example
//! cluster in `examples/cluster/` and the fixtures in `tests/fixtures/cluster/`.

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;

use forcegate::admission::Request;
use forcegate::cleanup::NoopRecorder;
use forcegate::cluster::{ClusterView, SnapshotCluster};
use forcegate::engine::{Engine, Settings};
use forcegate::facts::{self, Facts};
use forcegate::intent::{Intent, IntentKind, ObjectRef, Requester};
use forcegate::policy::PolicySet;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// When the example snapshot was taken.
fn now() -> Timestamp {
    "2025-06-01T12:00:30Z".parse().expect("timestamp")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> SnapshotCluster {
    SnapshotCluster::load(&[root().join("examples/cluster")]).expect("example snapshot loads")
}

fn partial() -> SnapshotCluster {
    SnapshotCluster::load(&[root().join("tests/fixtures/cluster/partial")]).expect("fixture loads")
}

fn target(kind: &str, resource: &str, namespace: Option<&str>, name: &str) -> ObjectRef {
    ObjectRef {
        group: String::new(),
        version: "v1".into(),
        kind: kind.into(),
        resource: resource.into(),
        subresource: None,
        namespace: namespace.map(str::to_owned),
        name: name.into(),
        uid: None,
    }
}

fn intent(kind: IntentKind, target: ObjectRef) -> Intent {
    Intent {
        kind,
        target,
        requester: Requester {
            username: "alice@example.com".into(),
            groups: vec!["system:authenticated".into()],
        },
        dry_run: false,
    }
}

fn request(
    operation: &str,
    target: &ObjectRef,
    old_object: Option<Value>,
    object: Option<Value>,
) -> Request {
    let review = json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": target.group, "version": target.version, "kind": target.kind},
        "resource": {"group": target.group, "version": target.version, "resource": target.resource},
        "subResource": target.subresource,
        "name": target.name,
        "namespace": target.namespace,
        "operation": operation,
        "userInfo": {"username": "alice@example.com", "groups": ["system:authenticated"]},
        "object": object,
        "oldObject": old_object,
    });
    serde_json::from_value(review).expect("admission request")
}

/// `kubectl delete pod NAME -n NAMESPACE --force --grace-period=0`.
fn force_delete_request(namespace: &str, name: &str) -> (Intent, Request) {
    let target = target("Pod", "pods", Some(namespace), name);
    let req = request("DELETE", &target, None, None);
    let intent = intent(
        IntentKind::ForceDelete {
            already_terminating: true,
        },
        target,
    );
    (intent, req)
}

fn force_delete(view: &dyn ClusterView, namespace: &str, name: &str) -> Facts {
    let (intent, req) = force_delete_request(namespace, name);
    facts::gather(&intent, &req, view, now())
}

fn finalizer_removal(
    view: &dyn ClusterView,
    target: ObjectRef,
    removed: &[&str],
    old_object: Option<Value>,
) -> Facts {
    let req = request("UPDATE", &target, old_object.clone(), old_object);
    let kind = IntentKind::FinalizerRemoval {
        removed: removed.iter().map(|f| (*f).to_owned()).collect(),
        deleting: true,
    };
    facts::gather(&intent(kind, target), &req, view, now())
}

#[test]
fn statefulset_leader_on_an_unreachable_node() {
    let facts = force_delete(&example(), "data", "db-0");
    assert!(facts.unknown.is_empty(), "{:?}", facts.unknown);

    let pod = facts.pod.expect("pod");
    assert_eq!(pod.uid, "3f8a2c6e-1d4b-4e9a-b7c5-0a2d4f6e8b01");
    assert_eq!(pod.node_name.as_deref(), Some("worker-2"));
    assert_eq!(pod.pod_ips, ["10.244.2.15"]);
    assert!(pod.terminating);
    assert_eq!(pod.claims, ["data-db-0"]);

    let node = facts.node.expect("node");
    assert!(node.exists && !node.ready && node.unreachable);
    assert!(
        !node.out_of_service && !node.fenced,
        "unreachable is not fenced"
    );
    assert_eq!(node.ready_status.as_deref(), Some("Unknown"));
    assert_eq!(node.heartbeat_age_seconds, Some(19 * 60 + 23));

    let owners = facts.owners.expect("owners");
    assert_eq!(owners.stateful_set.as_deref(), Some("db"));
    assert_eq!(owners.chain.len(), 1);
    assert_eq!(owners.chain[0].kind, "StatefulSet");

    let leader = facts.leader.expect("leader");
    assert!(leader.is_leader);
    assert_eq!(leader.leases.len(), 1);
    assert_eq!(leader.leases[0].name, "db-leader");
    assert!(!leader.leases[0].expired);

    let volumes = facts.volumes.expect("volumes");
    assert!(volumes.attached_on_pod_node && !volumes.attached_elsewhere);
    let claim = &volumes.claims[0];
    assert_eq!(
        claim.persistent_volume.as_deref(),
        Some("pvc-0f4e2a91-7c3b-4d8e-a2f6-1b9c3d5e7a01")
    );
    assert_eq!(claim.access_modes, ["ReadWriteOnce"]);
    assert_eq!(claim.attachments.len(), 1);
    assert_eq!(claim.attachments[0].node, "worker-2");

    let endpoints = facts.endpoints.expect("endpoints");
    assert!(endpoints.referenced);
    assert_eq!(endpoints.slices, ["data/db-7x2kq"]);
}

#[test]
fn endpoints_are_gathered_only_when_needed() {
    let (intent, req) = force_delete_request("data", "db-0");
    let all = facts::gather(&intent, &req, &example(), now());
    let needed = facts::gather_for(&intent, &req, &example(), now(), facts::Needs::ALL);
    assert_eq!(needed, all);
    let skipped = facts::gather_for(&intent, &req, &example(), now(), facts::Needs::default());
    assert!(all.endpoints.is_some() && skipped.endpoints.is_none());
    assert!(skipped.unknown.is_empty(), "{:?}", skipped.unknown);
    // Everything else is gathered as before.
    assert_eq!(
        Facts {
            endpoints: all.endpoints.clone(),
            ..skipped
        },
        all
    );
}

#[test]
fn the_engine_gathers_endpoints_when_a_policy_reads_them() {
    let (intent, req) = force_delete_request("data", "db-0");
    let engine = |policies: PolicySet| {
        Engine::new(
            Arc::new(ArcSwap::from_pointee(policies)),
            Arc::new(example()),
            Arc::new(NoopRecorder),
            Settings::default(),
        )
    };
    let shipped = PolicySet::load_dir(&root().join("policies")).expect("shipped policies load");
    let (facts, _) = engine(shipped).decide(&intent, &req);
    assert!(
        facts.pod.is_some() && facts.endpoints.is_none(),
        "{facts:?}"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let extra = dir.path().join("still-served.yaml");
    std::fs::write(
        &extra,
        "apiVersion: forcegate.dev/v1alpha1\nkind: ForceDeletionPolicy\nmetadata:\n  name: still-served\nspec:\n  match:\n    intents: [ForceDelete]\n  conditions:\n    - fact: endpoints.referenced\n      equals: true\n  action: Warn\n  message: still served by {{ facts.endpoints.slices }}\n",
    )
    .expect("write policy");
    let with_extra =
        PolicySet::load_files(&[root().join("policies"), extra]).expect("policies load");
    let (facts, decision) = engine(with_extra).decide(&intent, &req);
    assert!(facts.endpoints.expect("endpoints").referenced);
    assert!(
        decision
            .outcomes
            .iter()
            .any(|o| &*o.policy == "still-served"),
        "{:?}",
        decision.outcomes
    );
    assert!(
        decision
            .warnings
            .iter()
            .any(|w| w.starts_with("forcegate still-served: ") && w.contains("data/db-7x2kq")),
        "{:?}",
        decision.warnings
    );
}

#[test]
fn an_expired_lease_does_not_make_a_leader() {
    let facts = force_delete(&example(), "data", "db-1");
    let leader = facts.leader.expect("leader");
    assert!(!leader.is_leader);
    assert_eq!(leader.leases.len(), 1);
    let lease = &leader.leases[0];
    assert_eq!(lease.name, "db-backup-leader");
    assert!(lease.expired);
    assert!(lease.expires_in_seconds.is_some_and(|s| s < 0));
    let node = facts.node.expect("node");
    assert!(node.ready && !node.fenced);
    assert_eq!(node.heartbeat_age_seconds, Some(9));
}

#[test]
fn out_of_service_node_is_fenced_and_a_detaching_volume_is_not_attached() {
    let facts = force_delete(&example(), "data", "db-2");
    let node = facts.node.expect("node");
    assert!(node.out_of_service && node.fenced && node.unreachable);
    let volumes = facts.volumes.expect("volumes");
    assert!(!volumes.attached_on_pod_node);
    assert!(!volumes.claims[0].attachments[0].attached);
}

#[test]
fn volume_already_attached_on_another_node() {
    let facts = force_delete(&example(), "shop", "uploads-7f9c8d6b5-x7k2m");
    assert!(facts.node.expect("node").fenced);
    let volumes = facts.volumes.expect("volumes");
    assert!(!volumes.attached_on_pod_node);
    assert!(volumes.attached_elsewhere);
    assert_eq!(volumes.claims[0].attachments[0].node, "worker-1");
    let owners = facts.owners.expect("owners");
    let chain: Vec<(&str, &str)> = owners
        .chain
        .iter()
        .map(|o| (o.kind.as_str(), o.name.as_str()))
        .collect();
    assert_eq!(
        chain,
        [
            ("ReplicaSet", "uploads-7f9c8d6b5"),
            ("Deployment", "uploads")
        ]
    );
    assert!(owners.stateful_set.is_none() && owners.job.is_none());
    assert_eq!(
        facts.endpoints.expect("endpoints").slices,
        ["shop/uploads-m2x9d"]
    );
}

#[test]
fn legacy_leader_record_on_a_configmap() {
    let facts = force_delete(&example(), "shop", "web-5d8f9c7b6d-q9zt4");
    let leader = facts.leader.expect("leader");
    assert!(leader.is_leader);
    assert!(leader.leases.is_empty());
    assert_eq!(leader.legacy_records, ["ConfigMap/web-cache-warmer-lock"]);
    // Its sibling is not the leader.
    let sibling = force_delete(&example(), "shop", "web-5d8f9c7b6d-k2x7p");
    assert!(!sibling.leader.expect("leader").is_leader);
}

#[test]
fn expired_legacy_record_is_not_leadership() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = r#"
apiVersion: v1
kind: Pod
metadata: {name: cp-1, namespace: kube-system, uid: u-cp-1}
spec: {containers: [{name: c}], nodeName: worker-1}
---
apiVersion: v1
kind: ConfigMapList
items: []
"#;
    std::fs::write(dir.path().join("pod.yaml"), pod).expect("write");
    // kube-system.yaml: a live Lease held by cp-1_… and, on Endpoints
    // kube-scheduler, a legacy record naming cp-1 that expired in 2021.
    let with_endpoints = SnapshotCluster::load(&[
        dir.path().to_path_buf(),
        root().join("examples/cluster/kube-system.yaml"),
    ])
    .expect("loads");
    assert_eq!(
        with_endpoints
            .legacy_leader_records("kube-system", "cp-1")
            .expect("known")
            .len(),
        1
    );
    let leader = force_delete(&with_endpoints, "kube-system", "cp-1")
        .leader
        .expect("leader");
    assert!(leader.legacy_records.is_empty(), "expired record ignored");
    assert!(leader.is_leader, "the Lease still counts");

    let without_endpoints = SnapshotCluster::load(&[dir.path()]).expect("loads");
    let facts = force_delete(&without_endpoints, "kube-system", "cp-1");
    let why = facts
        .unknown
        .get("leader")
        .expect("Leases and Endpoints absent");
    assert_eq!(why.reason, "not in the snapshot");
}

#[test]
fn job_pod_with_its_cronjob() {
    let facts = force_delete(&example(), "batch", "report-29146260-7xk2p");
    let owners = facts.owners.expect("owners");
    let chain: Vec<&str> = owners.chain.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(chain, ["Job", "CronJob"]);
    let job = owners.job.expect("job");
    assert_eq!((job.active, job.succeeded, job.failed), (1, 0, 0));
    assert!(job.exists && !job.finished && job.tracking_finalizer);
    let cron = owners.cron_job.expect("cron job");
    assert_eq!(cron.name, "report");
    assert_eq!(cron.concurrency_policy, "Forbid");
    assert!(!cron.suspend);
    assert_eq!(cron.active, 1);
}

#[test]
fn finished_job() {
    let facts = force_delete(&example(), "batch", "migrate-v42-8qz5t");
    let owners = facts.owners.expect("owners");
    let job = owners.job.expect("job");
    assert!(job.finished && !job.tracking_finalizer);
    assert_eq!(job.succeeded, 1);
    assert!(owners.cron_job.is_none());
    assert_eq!(facts.pod.expect("pod").phase.as_deref(), Some("Succeeded"));
}

#[test]
fn eviction_reads_the_pod_from_the_view() {
    let mut target = target("Pod", "pods", Some("data"), "db-0");
    target.subresource = Some("eviction".into());
    let eviction = json!({
        "apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "db-0", "namespace": "data"},
        "deleteOptions": {"gracePeriodSeconds": 0}
    });
    let req = request("CREATE", &target, None, Some(eviction));
    let facts = facts::gather(
        &intent(IntentKind::Eviction, target),
        &req,
        &example(),
        now(),
    );
    assert!(facts.leader.expect("leader").is_leader);
    assert_eq!(facts.pod.expect("pod").name, "db-0");
}

/// The request's pod must be the cluster's: a review naming another
/// incarnation (a same-name replacement, or a forged oldObject) leaves the
/// pod, and the identity records are named from, Unknown.
#[test]
fn a_request_pod_the_cluster_does_not_hold_is_unknown() {
    // As classify names it: the UID of the request's oldObject.
    let mut target = target("Pod", "pods", Some("data"), "db-1");
    target.uid = Some("old-incarnation".into());
    let old = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "db-1", "namespace": "data", "uid": "old-incarnation",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "x", "controller": true}]},
        "spec": {"containers": [{"name": "postgres"}], "nodeName": "worker-3"},
        "status": {"phase": "Running", "podIP": "10.244.3.99"}
    });
    let req = request("DELETE", &target, Some(old.clone()), None);
    let intent = intent(
        IntentKind::ForceDelete {
            already_terminating: false,
        },
        target.clone(),
    );
    let facts = facts::gather(&intent, &req, &example(), now());
    assert!(facts.pod.is_none() && facts.identity.is_none(), "{facts:?}");
    let why = &facts.unknown["pod"].reason;
    assert!(why.contains("uid old-incarnation"), "{why}");
    assert!(facts.unknown["identity"].reason.contains("old-incarnation"));

    // The right UID on the wrong node is refused too.
    let mut unnamed = intent.clone();
    unnamed.target.uid = None;
    let cached = facts::gather(
        &unnamed,
        &request("DELETE", &target, None, None),
        &example(),
        now(),
    );
    let real_uid = cached.pod.expect("the cached pod").uid;
    let mut moved = old;
    moved["metadata"]["uid"] = json!(real_uid);
    let intent_with_uid = {
        let mut intent = intent.clone();
        intent.target.uid = Some(real_uid.clone());
        intent
    };
    let req = request("DELETE", &intent_with_uid.target, Some(moved), None);
    let facts = facts::gather(&intent_with_uid, &req, &example(), now());
    assert!(facts.pod.is_none(), "{facts:?}");
    assert!(facts.unknown["pod"].reason.contains("node worker-3"));
}

#[test]
fn job_tracking_finalizer_removal_knows_the_job() {
    let target = target("Pod", "pods", Some("batch"), "report-29146260-7xk2p");
    let old = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "report-29146260-7xk2p", "namespace": "batch", "uid": "ccf3a4b5-c6d7-4e8f-9a01-b2c3d4e5f6cc",
                     "deletionTimestamp": "2025-06-01T11:46:53Z",
                     "finalizers": ["batch.kubernetes.io/job-tracking"],
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "report-29146260",
                                          "uid": "aad1e2f3-a4b5-4c6d-9e8f-9a0b1c2d3eaa", "controller": true}]},
        "spec": {"containers": [{"name": "report"}], "nodeName": "worker-2"},
        "status": {"phase": "Running"}
    });
    let facts = finalizer_removal(
        &example(),
        target,
        &["batch.kubernetes.io/job-tracking"],
        Some(old),
    );
    assert!(facts.unknown.is_empty(), "{:?}", facts.unknown);
    let finalizer = &facts.finalizers[0];
    assert_eq!(finalizer.owner.as_deref(), Some("job-controller"));
    assert!(finalizer.well_known);
    assert!(
        finalizer
            .owner_users
            .contains(&"system:serviceaccount:kube-system:job-controller".to_owned())
    );
    let job = facts.owners.expect("owners").job.expect("job");
    assert!(job.tracking_finalizer && !job.finished);
    assert!(facts.node.expect("node").unreachable);
    assert!(
        facts.leader.is_none() && facts.volumes.is_none(),
        "not gathered for a finalizer removal"
    );
}

#[test]
fn pvc_protection_while_a_pod_still_uses_the_claim() {
    let target = target(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        Some("legacy-app"),
        "app-data",
    );
    let facts = finalizer_removal(&example(), target, &["kubernetes.io/pvc-protection"], None);
    let claim = facts.claim.expect("claim");
    assert!(claim.in_use);
    assert_eq!(claim.used_by, ["worker-0"]);
    assert_eq!(
        claim.volume_name.as_deref(),
        Some("pvc-4d8c6e35-1a7f-4bc2-a6d0-5f3a7b9c1e05")
    );
    assert_eq!(
        facts.finalizers[0].owner.as_deref(),
        Some("pvc-protection-controller")
    );
}

#[test]
fn a_succeeded_pod_does_not_hold_a_claim() {
    let snapshot = SnapshotCluster::from_yaml_str(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: ns, uid: u1}
spec: {containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: c1}}]}
status: {phase: Succeeded}
"#,
    )
    .expect("loads");
    let target = target(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        Some("ns"),
        "c1",
    );
    let facts = finalizer_removal(&snapshot, target, &["kubernetes.io/pvc-protection"], None);
    let claim = facts.claim.expect("claim");
    assert!(!claim.in_use && claim.used_by.is_empty());
}

#[test]
fn pv_protection_bound_and_attached_vs_released() {
    let bound = target(
        "PersistentVolume",
        "persistentvolumes",
        None,
        "pvc-0f4e2a91-7c3b-4d8e-a2f6-1b9c3d5e7a01",
    );
    let facts = finalizer_removal(&example(), bound, &["kubernetes.io/pv-protection"], None);
    let pv = facts.persistent_volume.expect("pv");
    assert!(pv.bound && pv.attached);
    assert_eq!(pv.claim.as_deref(), Some("data/data-db-0"));
    assert_eq!(pv.attachments[0].node, "worker-2");

    let released = target(
        "PersistentVolume",
        "persistentvolumes",
        None,
        "pvc-5e9d7f46-2b8a-4cd3-b7e1-6a4b8c0d2f06",
    );
    let facts = finalizer_removal(&example(), released, &["kubernetes.io/pv-protection"], None);
    let pv = facts.persistent_volume.expect("pv");
    assert!(!pv.bound && !pv.attached);
    assert_eq!(pv.phase.as_deref(), Some("Released"));
}

fn namespace_finalize(view: &dyn ClusterView, name: &str) -> Facts {
    let mut target = target("Namespace", "namespaces", None, name);
    target.subresource = Some("finalize".into());
    let req = request("UPDATE", &target, None, None);
    let kind = IntentKind::NamespaceFinalize {
        removed: vec!["kubernetes".into()],
    };
    facts::gather(&intent(kind, target), &req, view, now())
}

#[test]
fn terminating_namespace_with_objects_left() {
    let facts = namespace_finalize(&example(), "legacy-app");
    let ns = facts.namespace.expect("namespace");
    assert!(ns.exists);
    assert_eq!(ns.phase.as_deref(), Some("Terminating"));
    assert_eq!(ns.total, 3);
    assert!(!ns.empty);
    let counts: Vec<(&str, u64)> = ns.counts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        counts,
        [("ConfigMap", 1), ("PersistentVolumeClaim", 1), ("Pod", 1)]
    );
    assert!(ns.counted_kinds.contains(&"Lease".to_owned()));
    assert_eq!(
        facts.finalizers[0].owner.as_deref(),
        Some("namespace-controller")
    );
}

#[test]
fn empty_namespaces() {
    for (name, phase) in [("old-team", "Terminating"), ("sandbox", "Active")] {
        let ns = namespace_finalize(&example(), name)
            .namespace
            .expect("namespace");
        assert!(ns.empty && ns.total == 0, "{name}");
        assert_eq!(ns.phase.as_deref(), Some(phase));
    }
    let missing = namespace_finalize(&example(), "never-existed")
        .namespace
        .expect("namespace");
    assert!(!missing.exists && missing.empty);
}

#[test]
fn kinds_missing_from_a_snapshot_make_their_facts_unknown() {
    let facts = force_delete(&partial(), "messaging", "queue-0");
    assert!(facts.node.expect("node").ready);
    for group in ["owners", "leader", "volumes", "endpoints"] {
        if group == "owners" {
            // A StatefulSet pod needs no lookup to name its owner.
            continue;
        }
        let why = facts
            .unknown
            .get(group)
            .unwrap_or_else(|| panic!("{group} should be unknown"));
        assert_eq!(why.reason, "not in the snapshot");
    }
    assert_eq!(facts.unknown["leader"].kind, "Lease");
    assert_eq!(facts.unknown["volumes"].kind, "PersistentVolumeClaim");
    assert_eq!(
        facts.owners.expect("owners").stateful_set.as_deref(),
        Some("queue")
    );
}

#[test]
fn a_pod_without_claims_needs_no_storage_kinds_and_a_gone_node_is_fenced() {
    let facts = force_delete(&partial(), "messaging", "stateless-7c9d5b8f6-h2k4m");
    let volumes = facts.volumes.expect("no claims: nothing to look up");
    assert!(volumes.claims.is_empty());
    let node = facts.node.expect("node");
    assert!(!node.exists && node.fenced);
}

#[test]
fn a_pod_nobody_knows_makes_every_pod_group_unknown() {
    let facts = force_delete(&example(), "data", "db-9");
    assert!(facts.pod.is_none());
    for group in ["pod", "node", "owners", "leader", "volumes", "endpoints"] {
        assert!(facts.unknown.contains_key(group), "{group}");
    }
    assert!(facts.unknown["pod"].reason.contains("data/db-9"));
}

#[test]
fn facts_serialize_with_the_policy_field_names() {
    let facts = force_delete(&example(), "data", "db-0");
    let value = serde_json::to_value(&facts).expect("serializes");
    assert_eq!(value.pointer("/leader/isLeader"), Some(&json!(true)));
    assert_eq!(
        value.pointer("/node/heartbeatAgeSeconds"),
        Some(&json!(1163))
    );
    assert_eq!(
        value.pointer("/volumes/attachedOnPodNode"),
        Some(&json!(true))
    );
    assert_eq!(value.pointer("/owners/statefulSet"), Some(&json!("db")));
}
