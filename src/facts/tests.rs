//! Edge cases of fact derivation; the realistic scenarios live in
//! `tests/cluster_facts.rs` over the example snapshot.

use serde_json::json;

use super::*;
use crate::cluster::SnapshotCluster;
use crate::intent::{ObjectRef, Requester};

fn now() -> Timestamp {
    "2025-06-01T12:00:30Z".parse().expect("timestamp")
}

fn force_delete(yaml: &str, namespace: &str, name: &str) -> Facts {
    let view = SnapshotCluster::from_yaml_str(yaml).expect("fixture loads");
    let target = ObjectRef {
        version: "v1".into(),
        kind: "Pod".into(),
        resource: "pods".into(),
        namespace: Some(namespace.into()),
        name: name.into(),
        ..ObjectRef::default()
    };
    let request: Request = serde_json::from_value(json!({
        "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": name, "namespace": namespace, "operation": "DELETE",
        "userInfo": {"username": "alice"}, "object": null, "oldObject": null
    }))
    .expect("request");
    let intent = Intent {
        kind: IntentKind::ForceDelete {
            already_terminating: false,
        },
        target,
        requester: Requester::default(),
        dry_run: false,
    };
    gather(&intent, &request, &view, now())
}

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: app-0, namespace: ns, uid: uid-app-0}
spec: {containers: [{name: c}], nodeName: n1}
status: {phase: Running, podIP: 10.1.0.5, podIPs: [{ip: 10.1.0.5}, {ip: "fd00::5"}]}
"#;

fn with(extra: &str) -> String {
    format!("{POD}---\n{extra}")
}

#[test]
fn lease_expiry_boundaries() {
    let leases = r#"
apiVersion: coordination.k8s.io/v1
kind: LeaseList
items:
- metadata: {name: just-expired, namespace: ns}
  spec: {holderIdentity: app-0_a, leaseDurationSeconds: 15, renewTime: "2025-06-01T12:00:14.999000Z"}
- metadata: {name: still-held, namespace: ns}
  spec: {holderIdentity: app-0, leaseDurationSeconds: 15, renewTime: "2025-06-01T12:00:15.500000Z"}
- metadata: {name: no-times, namespace: ns}
  spec: {holderIdentity: app-0_b}
- metadata: {name: someone-else, namespace: ns}
  spec: {holderIdentity: app-01_c, leaseDurationSeconds: 15, renewTime: "2099-01-01T00:00:00.000000Z"}
---
apiVersion: v1
kind: ConfigMapList
items: []
---
apiVersion: v1
kind: EndpointsList
items: []
"#;
    let facts = force_delete(&with(leases), "ns", "app-0");
    let leader = facts.leader.expect("leader known");
    let by_name = |n: &str| {
        leader
            .leases
            .iter()
            .find(|l| l.name == n)
            .expect("lease listed")
    };
    assert!(by_name("just-expired").expired);
    assert_eq!(by_name("just-expired").expires_in_seconds, Some(-1));
    assert!(!by_name("still-held").expired);
    assert_eq!(by_name("still-held").expires_in_seconds, Some(0));
    assert!(
        !by_name("no-times").expired,
        "no times: cannot be shown expired"
    );
    assert!(by_name("no-times").expires_in_seconds.is_none());
    assert!(leader.leases.iter().all(|l| l.name != "someone-else"));
    assert!(leader.is_leader);
}

#[test]
fn a_reused_ip_pointing_at_another_pod_is_not_a_reference() {
    let slices = r#"
apiVersion: discovery.k8s.io/v1
kind: EndpointSliceList
items:
- addressType: IPv4
  metadata: {name: reused, namespace: ns}
  endpoints:
  - addresses: [10.1.0.5]
    targetRef: {kind: Pod, name: other-7, namespace: ns, uid: uid-other-7}
- addressType: IPv6
  metadata: {name: v6-manual, namespace: ns}
  endpoints:
  - addresses: ["fd00::5"]
- addressType: IPv4
  metadata: {name: by-uid, namespace: other}
  endpoints:
  - addresses: [10.9.9.9]
    targetRef: {kind: Pod, name: app-0, namespace: ns, uid: uid-app-0}
"#;
    let facts = force_delete(&with(slices), "ns", "app-0");
    let endpoints = facts.endpoints.expect("known");
    assert_eq!(endpoints.slices, ["ns/v6-manual", "other/by-uid"]);
    assert!(endpoints.referenced);
}

#[test]
fn a_node_without_conditions_is_not_ready() {
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
    let facts = force_delete(&with(node), "ns", "app-0");
    let node = facts.node.expect("known");
    assert!(node.exists && !node.ready && !node.fenced);
    assert!(node.heartbeat_age_seconds.is_none() && node.ready_status.is_none());
}

#[test]
fn an_unscheduled_pod_has_no_node_facts_and_nothing_unknown_about_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c}]}\n---\napiVersion: v1\nkind: NodeList\nitems: []\n";
    let facts = force_delete(pod, "ns", "p");
    assert!(facts.node.is_none());
    assert!(!facts.unknown.contains_key("node"));
}

#[test]
fn a_replicaset_missing_from_the_view_ends_the_chain() {
    let pod = r#"
apiVersion: v1
kind: Pod
metadata:
  name: web-abc
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5f, uid: rs-uid, controller: true}]
spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: ReplicaSetList
items: []
"#;
    let owners = force_delete(pod, "ns", "web-abc").owners.expect("known");
    assert_eq!(owners.chain.len(), 1);
    assert_eq!(owners.chain[0].uid.as_deref(), Some("rs-uid"));
}

#[test]
fn a_job_gone_from_the_view_is_reported_as_not_existing() {
    let pod = r#"
apiVersion: v1
kind: Pod
metadata:
  name: j-1
  namespace: ns
  finalizers: [batch.kubernetes.io/job-tracking]
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: j, uid: job-uid, controller: true}]
spec: {containers: [{name: c}]}
---
apiVersion: batch/v1
kind: JobList
items: []
"#;
    let job = force_delete(pod, "ns", "j-1")
        .owners
        .and_then(|o| o.job)
        .expect("job facts");
    assert!(!job.exists && job.tracking_finalizer);
}

#[test]
fn non_gated_intents_gather_nothing() {
    let view = SnapshotCluster::from_yaml_str(POD).expect("loads");
    let request: Request = serde_json::from_value(json!({
        "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": "DELETE", "userInfo": {}, "object": null, "oldObject": null
    }))
    .expect("request");
    let intent = Intent {
        kind: IntentKind::NotGated {
            reason: "graceful".into(),
        },
        target: ObjectRef::default(),
        requester: Requester::default(),
        dry_run: false,
    };
    assert_eq!(gather(&intent, &request, &view, now()), Facts::default());
}
