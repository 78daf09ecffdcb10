//! Conversions keep what facts read and nothing else; a pod decoded from a
//! request equals the record of the same pod decoded in full.

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::core::DynamicObject;
use serde_json::{Value, json};

use super::*;

fn owner(kind: &str, name: &str, controller: Option<bool>) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        controller,
        block_owner_deletion: None,
    }
}

#[test]
fn controller_is_the_managing_owner_else_the_first() {
    let owners = vec![
        owner("ConfigMap", "cfg", None),
        owner("ReplicaSet", "web-7d9f", Some(true)),
    ];
    let found = controller_of(Some(&owners)).expect("controller");
    assert_eq!(
        (found.kind.as_str(), found.name.as_str()),
        ("ReplicaSet", "web-7d9f")
    );
    assert_eq!(found.uid, "uid-web-7d9f");
    let first = controller_of(Some(&[
        owner("Job", "a", None),
        owner("Job", "b", Some(false)),
    ]));
    assert_eq!(first.map(|o| o.name), Some("a".into()));
    assert_eq!(controller_of(Some(&[])), None);
    assert_eq!(controller_of(None), None);
}

/// A pod as kubectl shows it: containers, projected token, a claim, an
/// ephemeral volume, addresses.
fn full_pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "db-0", "namespace": "data", "uid": "u-db-0",
            "labels": {"app": "db"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "finalizers": ["example.com/drain"],
            "deletionTimestamp": "2025-06-01T11:46:53Z",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u-db", "controller": true}],
            "managedFields": [{"manager": "kubectl"}]
        },
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "db", "image": "postgres:16", "command": ["postgres"],
                            "env": [{"name": "A", "value": "b"}]}],
            "volumes": [
                {"name": "kube-api-access", "projected": {"sources": []}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
                {"name": "again", "persistentVolumeClaim": {"claimName": "data-db-0"}}
            ]
        },
        "status": {
            "phase": "Running", "podIP": "10.244.1.7",
            "podIPs": [{"ip": "10.244.1.7"}, {"ip": "fd00::7"}],
            "containerStatuses": [{"name": "db", "containerID": "containerd://abc", "ready": true,
                                   "restartCount": 0, "image": "postgres:16", "imageID": ""}]
        }
    })
}

#[test]
fn pod_keeps_identity_ownership_placement_addresses_and_claims() {
    let typed: k8s::Pod = serde_json::from_value(full_pod()).expect("pod");
    let pod = Pod::from(typed);
    assert_eq!(
        pod.meta,
        Meta {
            namespace: "data".into(),
            name: "db-0".into(),
            uid: Some("u-db-0".into()),
        }
    );
    assert_eq!(pod.labels.get("app").map(String::as_str), Some("db"));
    assert_eq!(
        pod.controller.as_ref().map(|o| o.kind.as_str()),
        Some("StatefulSet")
    );
    assert_eq!(pod.finalizers, ["example.com/drain"]);
    assert!(pod.terminating);
    assert_eq!(pod.node_name.as_deref(), Some("node-a"));
    assert_eq!(pod.phase.as_deref(), Some("Running"));
    assert_eq!(pod.pod_ip.as_deref(), Some("10.244.1.7"));
    assert_eq!(pod.pod_ips, ["10.244.1.7", "fd00::7"]);
    assert_eq!(
        pod.claims,
        ["data-db-0", "db-0-scratch"],
        "sorted, deduplicated"
    );
}

fn dynamic(value: Value) -> DynamicObject {
    serde_json::from_value(value).expect("dynamic object")
}

#[test]
fn metadata_only_keeps_identity_and_the_leader_record() {
    let meta = ObjectMeta {
        name: Some("kube-scheduler".into()),
        namespace: Some("kube-system".into()),
        labels: Some([("a".to_owned(), "b".to_owned())].into()),
        annotations: Some(
            [
                (
                    LEGACY_LEADER.to_owned(),
                    r#"{"holderIdentity":"x"}"#.to_owned(),
                ),
                ("other".to_owned(), "y".to_owned()),
            ]
            .into(),
        ),
        ..ObjectMeta::default()
    };
    let record = MetadataOnly::from(meta);
    assert_eq!(record.meta.name, "kube-scheduler");
    assert_eq!(record.leader.as_deref(), Some(r#"{"holderIdentity":"x"}"#));
    assert_eq!(MetadataOnly::from(ObjectMeta::default()).leader, None);
}

#[test]
fn storage_records_keep_binding_and_attachment() {
    let claim: k8s::PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data-db-0", "namespace": "data"},
        "spec": {"accessModes": ["ReadWriteMany"], "volumeName": "pv-1"},
        "status": {"accessModes": ["ReadWriteOnce"]}
    }))
    .expect("claim");
    let claim = PersistentVolumeClaim::from(claim);
    assert_eq!(claim.volume_name.as_deref(), Some("pv-1"));
    assert_eq!(
        claim.access_modes,
        Some(vec!["ReadWriteOnce".to_owned()]),
        "granted first"
    );

    let volume: k8s::PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": "pv-1"},
        "spec": {"claimRef": {"namespace": "data", "name": "data-db-0"}},
        "status": {"phase": "Bound"}
    }))
    .expect("volume");
    let volume = PersistentVolume::from(volume);
    assert_eq!(volume.claim.as_deref(), Some("data/data-db-0"));
    assert_eq!(volume.phase.as_deref(), Some("Bound"));
    assert_eq!(volume.access_modes, None);

    let attachment: k8s_openapi::api::storage::v1::VolumeAttachment =
        serde_json::from_value(json!({
            "metadata": {"name": "csi-1"},
            "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-a", "source": {"persistentVolumeName": "pv-1"}},
            "status": {"attached": true, "detachError": {"message": "busy"}}
        }))
        .expect("attachment");
    let attachment = VolumeAttachment::from(attachment);
    assert_eq!(
        (
            attachment.node_name.as_str(),
            attachment.persistent_volume.as_deref()
        ),
        ("node-a", Some("pv-1"))
    );
    assert!(attachment.attached);
    assert_eq!(attachment.detach_error.as_deref(), Some("busy"));
}

#[test]
fn job_records_settle_counts_and_completion() {
    let job: k8s_openapi::api::batch::v1::Job = serde_json::from_value(json!({
        "metadata": {"name": "report-1", "namespace": "ops",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "report", "uid": "u-r", "controller": true}]},
        "status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}],
                   "uncountedTerminatedPods": {"succeeded": ["u-1"], "failed": ["u-2"]}}
    }))
    .expect("job");
    let job = Job::from(job);
    assert_eq!((job.active, job.succeeded, job.failed), (0, 1, 0));
    assert!(job.finished);
    assert_eq!(job.uncounted, ["u-1", "u-2"]);
    assert_eq!(job.controller.map(|o| o.name), Some("report".into()));
}

#[test]
fn node_records_keep_taint_keys_and_the_ready_condition() {
    let node: k8s::Node = serde_json::from_value(json!({
        "metadata": {"name": "node-a"},
        "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]},
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "Unknown", "lastHeartbeatTime": "2025-06-01T11:40:00Z"}
            ],
            "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 1}]
        }
    }))
    .expect("node");
    let node = Node::from(node);
    assert_eq!(node.taints, ["node.kubernetes.io/unreachable"]);
    let ready = node.ready.expect("ready condition");
    assert_eq!(ready.status, "Unknown");
    assert_eq!(
        ready.last_heartbeat,
        Some("2025-06-01T11:40:00Z".parse().expect("time"))
    );
}

/// What this module is for: records are a fraction of the structs.
#[test]
fn records_are_small() {
    assert!(size_of::<Pod>() * 6 < size_of::<k8s::Pod>());
    assert!(
        size_of::<VolumeAttachment>() * 16
            < size_of::<k8s_openapi::api::storage::v1::VolumeAttachment>()
    );
}

#[test]
fn request_namespaces_decode_like_full_namespaces() {
    let both_ways = |value: Value| {
        let typed = serde_json::from_value::<k8s::Namespace>(value.clone())
            .ok()
            .map(Namespace::from);
        (Namespace::from_dynamic(&dynamic(value)), typed)
    };
    let full = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "shop", "uid": "u-ns", "labels": {"team": "a"},
                     "deletionTimestamp": "2026-12-01T10:00:00Z"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating", "conditions": [
            {"type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain"}
        ]}
    });
    let (fast, typed) = both_ways(full);
    let fast = fast.expect("decodes");
    assert_eq!(fast.phase.as_deref(), Some("Terminating"));
    assert_eq!(fast.meta.uid.as_deref(), Some("u-ns"));
    assert_eq!(fast, typed.expect("decodes"));
    for sparse in [
        json!({"metadata": {"name": "shop"}}),
        json!({"metadata": {"name": "shop"}, "status": null}),
        json!({"metadata": {"name": "shop"}, "status": {"phase": null}}),
    ] {
        let (fast, typed) = both_ways(sparse);
        assert_eq!(fast.expect("decodes"), typed.expect("decodes"));
    }
    let (fast, typed) = both_ways(json!({"metadata": {"name": "shop"}, "status": {"phase": 7}}));
    assert!(fast.is_err() && typed.is_none());
}
