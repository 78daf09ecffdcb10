use std::collections::BTreeMap;

use ::kube::core::DynamicObject;
use ::kube::core::admission::AdmissionReview;
use serde_json::json;

use super::*;
use crate::decision::{Action, PolicyOutcome};
use crate::facts::{
    AttachmentFacts, ClaimVolume, IdentityFacts, JobFacts, LeaderFacts, LeaseFacts, OwnerFacts,
    OwnerRef, PodFacts, VolumeFacts,
};
use crate::intent::{ObjectRef, Requester};

const UID: &str = "5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11";

fn intent(kind: IntentKind) -> Intent {
    Intent {
        kind,
        target: ObjectRef {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            subresource: None,
            namespace: Some("db".into()),
            name: "web-0".into(),
            uid: Some(UID.into()),
        },
        requester: Requester {
            username: "alice@example.com".into(),
            groups: vec!["oncall".into(), "system:authenticated".into()],
        },
        dry_run: false,
    }
}

fn facts() -> Facts {
    Facts {
        identity: Some(IdentityFacts { uid: UID.into() }),
        pod: Some(PodFacts {
            namespace: "db".into(),
            name: "web-0".into(),
            uid: UID.into(),
            node_name: Some("worker-1".into()),
            pod_ip: Some("10.244.1.17".into()),
            pod_ips: vec!["10.244.1.17".into(), "fd00::17".into()],
            phase: Some("Running".into()),
            claims: vec!["data-web-0".into()],
            ..PodFacts::default()
        }),
        volumes: Some(VolumeFacts {
            claims: vec![ClaimVolume {
                claim: "data-web-0".into(),
                persistent_volume: Some("pvc-7d1c".into()),
                access_modes: vec!["ReadWriteOnce".into()],
                attachments: vec![AttachmentFacts {
                    name: "csi-4e1b".into(),
                    node: "worker-1".into(),
                    attached: true,
                }],
                attached_on_pod_node: true,
                ..ClaimVolume::default()
            }],
            attached_on_pod_node: true,
            ..VolumeFacts::default()
        }),
        leader: Some(LeaderFacts {
            is_leader: true,
            leases: vec![LeaseFacts {
                namespace: "db".into(),
                name: "web-leader".into(),
                holder: "web-0_8f3a".into(),
                expired: false,
                expires_in_seconds: Some(12),
            }],
            ..LeaderFacts::default()
        }),
        owners: Some(OwnerFacts {
            chain: vec![
                OwnerRef {
                    kind: "Job".into(),
                    name: "backup-29012".into(),
                    uid: Some("j1".into()),
                },
                OwnerRef {
                    kind: "CronJob".into(),
                    name: "backup".into(),
                    uid: Some("c1".into()),
                },
            ],
            job: Some(JobFacts {
                name: "backup-29012".into(),
                ..JobFacts::default()
            }),
            ..OwnerFacts::default()
        }),
        ..Facts::default()
    }
}

fn decision() -> Decision {
    Decision {
        allowed: true,
        record: true,
        break_glass: Some("INC-4411: node lost power".into()),
        outcomes: vec![PolicyOutcome {
            policy: "attached-volumes".into(),
            action: Action::Deny,
            fact: "facts.volumes.attachedOnPodNode == true".into(),
            unknown: false,
        }],
        ..Decision::default()
    }
}

#[test]
fn plan_fills_the_spec_from_intent_facts_and_decision() {
    let now: Timestamp = "2026-03-02T10:00:00Z".parse().expect("timestamp");
    let spec = plan(
        &intent(IntentKind::ForceDelete {
            already_terminating: false,
        }),
        &facts(),
        &decision(),
        now,
    );
    assert_eq!(spec.subject, "Pod db/web-0");
    assert_eq!(spec.object.uid.as_deref(), Some(UID));
    assert_eq!(spec.object.namespace.as_deref(), Some("db"));
    assert_eq!(spec.action.type_, "ForceDelete");
    assert!(spec.action.object_deleting);
    assert_eq!(spec.node.as_deref(), Some("worker-1"));
    assert_eq!(spec.pod_ips, ["10.244.1.17", "fd00::17"]);
    assert_eq!(spec.volumes.len(), 1);
    assert_eq!(
        spec.volumes[0].persistent_volume.as_deref(),
        Some("pvc-7d1c")
    );
    assert_eq!(spec.volumes[0].attachments[0].node, "worker-1");
    assert_eq!(spec.leases[0].holder, "web-0_8f3a");
    assert_eq!(spec.owners.len(), 2);
    assert_eq!(spec.job.as_deref(), Some("backup-29012"));
    assert_eq!(spec.requester.username, "alice@example.com");
    assert_eq!(
        spec.break_glass_reason.as_deref(),
        Some("INC-4411: node lost power")
    );
    assert_eq!(spec.requested_at.0, now);
    assert_eq!(spec.policies.len(), 1);
    assert_eq!(spec.policies[0].action, Action::Deny);
    assert_eq!(record_name_for(&spec), format!("fd-{UID}"));
}

#[test]
fn plan_of_a_finalizer_strip_keeps_what_was_removed() {
    let mut intent = intent(IntentKind::FinalizerRemoval {
        removed: vec!["example.com/bucket".into()],
        deleting: false,
    });
    intent.target.namespace = None;
    let spec = plan(
        &intent,
        &Facts::default(),
        &Decision::allow(),
        Timestamp::UNIX_EPOCH,
    );
    assert_eq!(spec.subject, "Pod web-0");
    assert_eq!(spec.action.removed_finalizers, ["example.com/bucket"]);
    assert!(!spec.action.object_deleting);
    assert!(spec.node.is_none() && spec.pod_ips.is_empty() && spec.policies.is_empty());
}

fn request(annotations: Option<BTreeMap<String, String>>, with_object: bool) -> Request {
    let object = json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-web-0", "namespace": "db", "uid": UID,
                     "annotations": annotations, "finalizers": []},
    });
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "PersistentVolumeClaim"},
            "resource": {"group": "", "version": "v1", "resource": "persistentvolumeclaims"},
            "requestKind": {"group": "", "version": "v1", "kind": "PersistentVolumeClaim"},
            "requestResource": {"group": "", "version": "v1", "resource": "persistentvolumeclaims"},
            "name": "data-web-0", "namespace": "db", "operation": "UPDATE",
            "userInfo": {"username": "alice@example.com"},
            "object": if with_object { object.clone() } else { serde_json::Value::Null },
            "oldObject": object,
            "dryRun": false
        }
    });
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(review).expect("review");
    review.try_into().expect("request")
}

fn apply(request: &Request, patch: &Patch) -> serde_json::Value {
    let mut doc = serde_json::to_value(request.object.as_ref().expect("object")).expect("json");
    json_patch::patch(&mut doc, patch).expect("patch applies");
    doc
}

#[test]
fn annotation_patch_adds_to_existing_annotations() {
    let existing = BTreeMap::from([("team".to_string(), "storage".to_string())]);
    let request = request(Some(existing), true);
    let patch = annotation_patch(&request, "fd-x").expect("patch");
    let text = serde_json::to_string(&patch).expect("json");
    assert!(
        text.contains(r#""path":"/metadata/annotations/forcegate.dev~1cleanup""#),
        "{text}"
    );
    let doc = apply(&request, &patch);
    assert_eq!(
        doc["metadata"]["annotations"]["forcegate.dev/cleanup"],
        "fd-x"
    );
    assert_eq!(doc["metadata"]["annotations"]["team"], "storage");
}

#[test]
fn annotation_patch_creates_the_map_when_absent() {
    let request = request(None, true);
    let patch = annotation_patch(&request, "fd-x").expect("patch");
    let text = serde_json::to_string(&patch).expect("json");
    assert!(text.contains(r#""path":"/metadata/annotations""#), "{text}");
    let doc = apply(&request, &patch);
    assert_eq!(
        doc["metadata"]["annotations"],
        json!({"forcegate.dev/cleanup": "fd-x"})
    );
}

#[test]
fn annotation_patch_is_none_without_object_or_when_already_set() {
    assert!(annotation_patch(&request(None, false), "fd-x").is_none());
    let set = BTreeMap::from([(CLEANUP_ANNOTATION.to_string(), "fd-x".to_string())]);
    assert!(annotation_patch(&request(Some(set.clone()), true), "fd-x").is_none());
    // A different record name (a recreated object) is overwritten.
    let request = request(Some(set), true);
    let patch = annotation_patch(&request, "fd-y").expect("patch");
    assert_eq!(
        apply(&request, &patch)["metadata"]["annotations"]["forcegate.dev/cleanup"],
        "fd-y"
    );
}
