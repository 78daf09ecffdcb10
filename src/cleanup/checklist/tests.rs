//! Checklist items over small cluster snapshots, each clean and not clean.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::cleanup::crd::{
    ObjectReference, RecordedAction, RecordedLease, RecordedOwner, RecordedRequester,
    RecordedVolume,
};
use crate::cleanup::test_view::{TestView, parse};

const UID: &str = "5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11";
const NEW_UID: &str = "0b6e2f1c-92aa-4f7e-8d0a-3c55e1f4a702";

fn deleted_at() -> Timestamp {
    "2026-03-02T10:00:00Z".parse().expect("timestamp")
}

fn now() -> Timestamp {
    "2026-03-02T10:01:00Z".parse().expect("timestamp")
}

/// `kubectl delete pod web-0 -n db --force --grace-period=0` of a StatefulSet
/// pod on node worker-1 with a PVC, a Lease and an endpoint.
fn spec() -> ForceDeletionSpec {
    ForceDeletionSpec {
        subject: "Pod db/web-0".into(),
        object: ObjectReference {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            subresource: None,
            namespace: Some("db".into()),
            name: "web-0".into(),
            uid: Some(UID.into()),
        },
        action: RecordedAction {
            type_: "ForceDelete".into(),
            removed_finalizers: Vec::new(),
            object_deleting: true,
        },
        node: Some("worker-1".into()),
        pod_ips: vec!["10.244.1.17".into()],
        volumes: vec![RecordedVolume {
            claim: "data-web-0".into(),
            persistent_volume: Some("pvc-7d1c".into()),
            access_modes: vec!["ReadWriteOnce".into()],
            attachments: Vec::new(),
        }],
        leases: vec![RecordedLease {
            namespace: "db".into(),
            name: "web-leader".into(),
            holder: "web-0_8f3a".into(),
            expired: false,
        }],
        owners: vec![RecordedOwner {
            kind: "StatefulSet".into(),
            name: "web".into(),
            uid: None,
        }],
        job: None,
        requester: RecordedRequester {
            username: "alice@example.com".into(),
            groups: vec!["system:authenticated".into()],
        },
        break_glass_reason: None,
        requested_at: Time(deleted_at()),
        policies: Vec::new(),
    }
}

fn pod(uid: &str, node: Option<&str>, phase: &str) -> Arc<Pod> {
    parse(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "db", "uid": uid,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "a1", "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "db", "image": "postgres:16"}]},
        "status": {"phase": phase}
    }))
}

fn node(name: &str, out_of_service: bool) -> Arc<Node> {
    let taints = if out_of_service {
        json!([{"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}])
    } else {
        json!([])
    };
    parse(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name},
        "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    }))
}

fn attachment(node: &str, attached: bool, detach_error: Option<&str>) -> Arc<VolumeAttachment> {
    let mut status = json!({"attached": attached});
    if let Some(message) = detach_error {
        status["detachError"] = json!({"message": message, "time": "2026-03-02T10:00:30Z"});
    }
    parse(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": format!("csi-4e1b-{node}")},
        "spec": {"attacher": "ebs.csi.aws.com", "nodeName": node, "source": {"persistentVolumeName": "pvc-7d1c"}},
        "status": status
    }))
}

fn lease(holder: &str, acquired: &str, renewed: &str) -> Arc<Lease> {
    lease_for(holder, acquired, renewed, 30)
}

fn lease_for(holder: &str, acquired: &str, renewed: &str, seconds: i32) -> Arc<Lease> {
    parse(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "web-leader", "namespace": "db"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": seconds,
                 "acquireTime": acquired, "renewTime": renewed}
    }))
}

fn slice(target_uid: &str, ip: &str) -> Arc<EndpointSlice> {
    parse(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "web-x7k2p", "namespace": "db"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [ip], "targetRef": {"kind": "Pod", "name": "web-0", "namespace": "db", "uid": target_uid}}]
    }))
}

fn job(uncounted_failed: &[&str]) -> Arc<Job> {
    parse(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "backup-29012", "namespace": "db"},
        "spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox"}], "restartPolicy": "Never"}}},
        "status": {"active": 0, "failed": 1, "uncountedTerminatedPods": {"failed": uncounted_failed}}
    }))
}

fn find<'a>(items: &'a [ChecklistItem], name: &str) -> &'a ChecklistItem {
    items
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("no item {name} in {items:#?}"))
}

fn eval(view: &TestView) -> Vec<ChecklistItem> {
    evaluate(&spec(), view, now())
}

/// The aftermath fully cleaned: the old node is still there, nothing else is.
fn clean_view() -> TestView {
    TestView {
        nodes: vec![node("worker-1", false)],
        ..TestView::default()
    }
}

#[test]
fn clean_aftermath_is_clean_with_manual_node_steps() {
    let items = eval(&clean_view());
    let open: Vec<_> = items
        .iter()
        .filter(|i| !matches!(i.state, ItemState::Ok | ItemState::Manual))
        .collect();
    assert!(open.is_empty(), "{open:#?}");
    assert_eq!(
        phase(&items, Duration::from_secs(60), Duration::from_secs(900)),
        Phase::Clean
    );
    for name in [
        "object-gone",
        "volume-detached/pvc-7d1c",
        "endpoints-released",
        "lease-released/db/web-leader",
        "no-split-brain",
    ] {
        assert_eq!(find(&items, name).state, ItemState::Ok, "{name}");
    }
}

#[test]
fn object_still_present_by_uid_is_pending() {
    let view = TestView {
        pods: vec![pod(UID, Some("worker-1"), "Running")],
        ..clean_view()
    };
    let item = find(&eval(&view), "object-gone").clone();
    assert_eq!(item.state, ItemState::Pending);
    assert!(
        item.message.contains("Pod db/web-0 still exists"),
        "{}",
        item.message
    );
}

#[test]
fn same_name_with_new_uid_counts_as_gone() {
    let view = TestView {
        pods: vec![pod(NEW_UID, Some("worker-1"), "Running")],
        ..clean_view()
    };
    assert_eq!(find(&eval(&view), "object-gone").state, ItemState::Ok);
}

#[test]
fn unknown_lookup_is_pending_not_ok() {
    let view = TestView {
        unknown: vec!["Pod", "VolumeAttachment", "EndpointSlice", "Lease"],
        ..clean_view()
    };
    let items = eval(&view);
    for name in [
        "object-gone",
        "volume-detached/pvc-7d1c",
        "endpoints-released",
        "lease-released/db/web-leader",
        "no-split-brain",
    ] {
        let item = find(&items, name);
        assert_eq!(item.state, ItemState::Pending, "{name}");
        assert!(
            item.message.contains("watch not synced"),
            "{}",
            item.message
        );
    }
    assert_eq!(
        phase(&items, Duration::from_secs(60), Duration::from_secs(900)),
        Phase::Verifying
    );
}

#[test]
fn attachment_on_old_node_is_pending_until_gone() {
    let attached = TestView {
        attachments: vec![attachment("worker-1", true, None)],
        ..clean_view()
    };
    let item = find(&eval(&attached), "volume-detached/pvc-7d1c").clone();
    assert_eq!(item.state, ItemState::Pending);
    assert!(
        item.message
            .contains("csi-4e1b-worker-1 still attaches PV pvc-7d1c to node worker-1"),
        "{}",
        item.message
    );

    let failing = TestView {
        attachments: vec![attachment(
            "worker-1",
            false,
            Some("rpc error: volume in use"),
        )],
        ..clean_view()
    };
    let item = find(&eval(&failing), "volume-detached/pvc-7d1c").clone();
    assert_eq!(item.state, ItemState::Pending);
    assert!(
        item.message.contains("rpc error: volume in use"),
        "{}",
        item.message
    );

    // Re-attached to the replacement's node: detached from the old one.
    let moved = TestView {
        attachments: vec![attachment("worker-2", true, None)],
        ..clean_view()
    };
    assert_eq!(
        find(&eval(&moved), "volume-detached/pvc-7d1c").state,
        ItemState::Ok
    );
}

#[test]
fn endpoint_slice_referencing_uid_or_ip_is_pending() {
    for slice in [slice(UID, "10.244.9.9"), slice("other", "10.244.1.17")] {
        let view = TestView {
            slices: vec![slice],
            ..clean_view()
        };
        let item = find(&eval(&view), "endpoints-released").clone();
        assert_eq!(item.state, ItemState::Pending);
        assert!(item.message.contains("db/web-x7k2p"), "{}", item.message);
    }
    let unrelated = TestView {
        slices: vec![slice("other", "10.244.9.9")],
        ..clean_view()
    };
    assert_eq!(
        find(&eval(&unrelated), "endpoints-released").state,
        ItemState::Ok
    );
}

#[test]
fn lease_states() {
    let cases = [
        // Held, last renewed before the deletion, not expired yet.
        (
            lease("web-0_8f3a", "2026-03-02T09:00:00Z", "2026-03-02T10:00:50Z"),
            ItemState::Failed,
        ),
        (
            lease("web-0_8f3a", "2026-03-02T09:00:00Z", "2026-03-02T10:00:40Z"),
            ItemState::Failed,
        ),
        (
            lease_for(
                "web-0_8f3a",
                "2026-03-02T09:00:00Z",
                "2026-03-02T09:59:50Z",
                120,
            ),
            ItemState::Pending,
        ),
        // Expired: renewed at 10:00:00, 30 s lease, now 10:01:00.
        (
            lease("web-0_8f3a", "2026-03-02T09:00:00Z", "2026-03-02T10:00:00Z"),
            ItemState::Ok,
        ),
        // Taken over by a new identity of the same pod name after the deletion.
        (
            lease("web-0_c41d", "2026-03-02T10:00:45Z", "2026-03-02T10:00:55Z"),
            ItemState::Ok,
        ),
    ];
    for (lease, expected) in cases {
        let renewed = lease.spec.as_ref().and_then(|s| s.renew_time.clone());
        let view = TestView {
            leases: vec![lease],
            ..clean_view()
        };
        let item = find(&eval(&view), "lease-released/db/web-leader").clone();
        assert_eq!(
            item.state, expected,
            "renewed {renewed:?}: {}",
            item.message
        );
    }
    // Released: the holder is someone else entirely.
    let view = TestView {
        leases: vec![lease(
            "web-1_77aa",
            "2026-03-02T10:00:10Z",
            "2026-03-02T10:00:55Z",
        )],
        ..clean_view()
    };
    assert_eq!(
        find(&eval(&view), "lease-released/db/web-leader").state,
        ItemState::Ok
    );
}

#[test]
fn ghost_renewing_its_lease_needs_attention_at_once() {
    let view = TestView {
        leases: vec![lease(
            "web-0_8f3a",
            "2026-03-02T09:00:00Z",
            "2026-03-02T10:00:50Z",
        )],
        ..clean_view()
    };
    let items = eval(&view);
    let item = find(&items, "lease-released/db/web-leader");
    assert!(
        item.message.contains("old process is alive on worker-1"),
        "{}",
        item.message
    );
    assert_eq!(
        phase(&items, Duration::from_secs(60), Duration::from_secs(900)),
        Phase::NeedsAttention
    );
}

#[test]
fn replacement_while_old_node_unfenced_is_split_brain() {
    let view = TestView {
        pods: vec![pod(NEW_UID, Some("worker-2"), "Running")],
        ..clean_view()
    };
    let item = find(&eval(&view), "no-split-brain").clone();
    assert_eq!(item.state, ItemState::Failed);
    assert!(
        item.message.contains("runs on node worker-2"),
        "{}",
        item.message
    );
    assert_eq!(
        item.command.as_deref(),
        Some(
            "kubectl taint nodes worker-1 node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
        )
    );
}

#[test]
fn replacement_is_fine_when_old_node_fenced_gone_or_same() {
    let fenced = TestView {
        pods: vec![pod(NEW_UID, Some("worker-2"), "Running")],
        nodes: vec![node("worker-1", true)],
        ..TestView::default()
    };
    let gone = TestView {
        pods: vec![pod(NEW_UID, Some("worker-2"), "Running")],
        ..TestView::default()
    };
    let same_node = TestView {
        pods: vec![pod(NEW_UID, Some("worker-1"), "Running")],
        ..clean_view()
    };
    let finished = TestView {
        pods: vec![pod(NEW_UID, Some("worker-2"), "Succeeded")],
        ..clean_view()
    };
    for (label, view) in [
        ("fenced", fenced),
        ("gone", gone),
        ("same node", same_node),
        ("finished", finished),
    ] {
        assert_eq!(
            find(&eval(&view), "no-split-brain").state,
            ItemState::Ok,
            "{label}"
        );
    }
    let unscheduled = TestView {
        pods: vec![pod(NEW_UID, None, "Pending")],
        ..clean_view()
    };
    assert_eq!(
        find(&eval(&unscheduled), "no-split-brain").state,
        ItemState::Pending
    );
}

#[test]
fn job_counts_settle_when_the_pod_is_counted() {
    let mut job_spec = spec();
    job_spec.job = Some("backup-29012".into());
    job_spec.leases.clear();
    let uncounted = TestView {
        jobs: vec![job(&[UID])],
        ..clean_view()
    };
    let item = find(&evaluate(&job_spec, &uncounted, now()), "job-settled").clone();
    assert_eq!(item.state, ItemState::Pending);
    assert!(
        item.message.contains("has not counted the pod"),
        "{}",
        item.message
    );

    let counted = TestView {
        jobs: vec![job(&[])],
        ..clean_view()
    };
    let item = find(&evaluate(&job_spec, &counted, now()), "job-settled").clone();
    assert_eq!(item.state, ItemState::Ok);
    assert!(item.message.contains("failed=1"), "{}", item.message);

    assert_eq!(
        find(&evaluate(&job_spec, &clean_view(), now()), "job-settled").state,
        ItemState::Ok
    );
}

#[test]
fn node_side_steps_are_manual_with_commands() {
    let items = eval(&clean_view());
    let command = |name: &str| find(&items, name).command.clone().unwrap_or_default();
    assert_eq!(find(&items, "node/sandbox").state, ItemState::Manual);
    assert_eq!(
        command("node/sandbox"),
        format!("crictl pods --label io.kubernetes.pod.uid={UID} -q")
    );
    assert!(find(&items, "node/sandbox").message.contains("crictl rmp"));
    assert_eq!(
        command("node/mounts"),
        format!("findmnt -rn -o TARGET | grep {UID}")
    );
    assert!(find(&items, "node/mounts").message.contains("umount"));
    assert_eq!(command("node/veth"), "ip route show | grep -w 10.244.1.17");
    assert!(command("node/ipam").contains("/var/lib/cni/networks"));
    assert!(
        find(&items, "node/ipam")
            .message
            .contains("calicoctl ipam release --ip=10.244.1.17")
    );
}

#[test]
fn finalizer_strip_of_unwatched_kind_lists_manual_checks() {
    let spec = ForceDeletionSpec {
        subject: "Certificate web/tls".into(),
        object: ObjectReference {
            group: "cert-manager.io".into(),
            version: "v1".into(),
            kind: "Certificate".into(),
            resource: "certificates".into(),
            namespace: Some("web".into()),
            name: "tls".into(),
            uid: Some(UID.into()),
            subresource: None,
        },
        action: RecordedAction {
            type_: "FinalizerRemoval".into(),
            removed_finalizers: vec!["cert-manager.io/cleanup".into()],
            object_deleting: true,
        },
        node: None,
        pod_ips: Vec::new(),
        volumes: Vec::new(),
        leases: Vec::new(),
        owners: Vec::new(),
        ..self::spec()
    };
    let items = evaluate(&spec, &TestView::default(), now());
    assert_eq!(items.len(), 2, "{items:#?}");
    let gone = find(&items, "object-gone");
    assert_eq!(gone.state, ItemState::Manual);
    assert_eq!(
        gone.command.as_deref(),
        Some("kubectl get certificates.cert-manager.io tls -n web -o jsonpath='{.metadata.uid}'")
    );
    assert_eq!(
        find(&items, "finalizer-skipped/cert-manager.io/cleanup").state,
        ItemState::Manual
    );
    assert_eq!(
        phase(&items, Duration::ZERO, Duration::from_secs(900)),
        Phase::Clean
    );
}

#[test]
fn strip_of_a_live_object_does_not_wait_for_it_to_go() {
    let mut spec = spec();
    spec.object.resource = "persistentvolumeclaims".into();
    spec.object.kind = "PersistentVolumeClaim".into();
    spec.action = RecordedAction {
        type_: "FinalizerRemoval".into(),
        removed_finalizers: vec!["kubernetes.io/pvc-protection".into()],
        object_deleting: false,
    };
    let items = evaluate(&spec, &TestView::default(), now());
    assert!(items.iter().all(|i| i.name != "object-gone"), "{items:#?}");
}

#[test]
fn deleting_pvc_is_checked_by_uid() {
    let mut spec = spec();
    spec.object.resource = "persistentvolumeclaims".into();
    spec.object.name = "data-web-0".into();
    spec.action.object_deleting = true;
    let view = TestView {
        pvcs: vec![parse(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-web-0", "namespace": "db", "uid": UID, "deletionTimestamp": "2026-03-02T10:00:00Z"}
        }))],
        ..TestView::default()
    };
    assert_eq!(
        find(&evaluate(&spec, &view, now()), "object-gone").state,
        ItemState::Pending
    );
    assert_eq!(
        find(&evaluate(&spec, &TestView::default(), now()), "object-gone").state,
        ItemState::Ok
    );
}

#[test]
fn phase_rules() {
    let ok = |name: &str, state| ChecklistItem {
        name: name.into(),
        state,
        message: String::new(),
        command: None,
    };
    let deadline = Duration::from_secs(900);
    let pending = [
        ok("a", ItemState::Ok),
        ok("b", ItemState::Pending),
        ok("c", ItemState::Manual),
    ];
    assert_eq!(
        phase(&pending, Duration::from_secs(899), deadline),
        Phase::Verifying
    );
    assert_eq!(phase(&pending, deadline, deadline), Phase::NeedsAttention);
    let failed = [ok("a", ItemState::Failed)];
    assert_eq!(
        phase(&failed, Duration::ZERO, deadline),
        Phase::NeedsAttention
    );
    let done = [ok("a", ItemState::Ok), ok("c", ItemState::Manual)];
    assert_eq!(
        phase(&done, Duration::from_secs(10_000), deadline),
        Phase::Clean
    );
}
