//! Unit tests for index maintenance; `proptests` checks it against a naive scan.

use k8s_openapi::api::coordination::v1::{self as coordination, LeaseSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::core::v1::{
    self as core, EphemeralVolumeSource, PersistentVolumeClaimVolumeSource, PodSpec, Volume,
};
use k8s_openapi::api::discovery::v1::{self as discovery, Endpoint};
use k8s_openapi::api::storage::v1::{
    self as storage, VolumeAttachmentSource, VolumeAttachmentSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::cluster::record::{LEGACY_LEADER, Record};

pub(super) fn meta(namespace: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

pub(super) fn pod(
    namespace: &str,
    name: &str,
    uid: &str,
    claims: &[&str],
    ephemeral: bool,
) -> Object {
    let mut volumes: Vec<Volume> = claims
        .iter()
        .map(|c| Volume {
            name: format!("v-{c}"),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: (*c).to_owned(),
                read_only: None,
            }),
            ..Volume::default()
        })
        .collect();
    if ephemeral {
        volumes.push(Volume {
            name: "scratch".into(),
            ephemeral: Some(EphemeralVolumeSource::default()),
            ..Volume::default()
        });
    }
    Object::from(core::Pod {
        metadata: ObjectMeta {
            uid: Some(uid.to_owned()),
            ..meta(namespace, name)
        },
        spec: Some(PodSpec {
            volumes: Some(volumes),
            ..PodSpec::default()
        }),
        status: None,
    })
}

pub(super) fn lease(namespace: &str, name: &str, holder: Option<&str>) -> Object {
    Object::from(coordination::Lease {
        metadata: meta(namespace, name),
        spec: Some(LeaseSpec {
            holder_identity: holder.map(str::to_owned),
            ..LeaseSpec::default()
        }),
    })
}

pub(super) fn attachment(name: &str, pv: &str, node: &str) -> Object {
    Object::from(storage::VolumeAttachment {
        metadata: meta("", name),
        spec: VolumeAttachmentSpec {
            attacher: "ebs.csi.aws.com".into(),
            node_name: node.to_owned(),
            source: VolumeAttachmentSource {
                persistent_volume_name: Some(pv.to_owned()),
                ..VolumeAttachmentSource::default()
            },
        },
        status: None,
    })
}

pub(super) fn slice(namespace: &str, name: &str, endpoints: &[(Option<&str>, &[&str])]) -> Object {
    Object::from(discovery::EndpointSlice {
        metadata: meta(namespace, name),
        address_type: "IPv4".into(),
        endpoints: Some(
            endpoints
                .iter()
                .map(|(uid, ips)| Endpoint {
                    addresses: ips.iter().map(|ip| (*ip).to_owned()).collect(),
                    target_ref: uid.map(|uid| ObjectReference {
                        kind: Some("Pod".into()),
                        uid: Some(uid.to_owned()),
                        ..ObjectReference::default()
                    }),
                    ..Endpoint::default()
                })
                .collect(),
        ),
        ports: None,
    })
}

pub(super) fn legacy(kind: Kind, namespace: &str, name: &str, holder: Option<&str>) -> Object {
    let mut meta = meta(namespace, name);
    if let Some(holder) = holder {
        meta.annotations = Some(
            [(
                LEGACY_LEADER.to_owned(),
                format!(r#"{{"holderIdentity":"{holder}","leaseDurationSeconds":15}}"#),
            )]
            .into_iter()
            .collect(),
        );
    }
    Object::metadata_only(kind, meta)
}

fn names<T: Record>(objects: &[Arc<T>]) -> Vec<String> {
    objects.iter().map(|o| o.meta().name.clone()).collect()
}

#[test]
fn pods_are_found_by_uid_and_claim_and_forgotten_on_delete() {
    let mut index = Index::new();
    index.apply(pod("db", "db-0", "u0", &["data-db-0"], true));
    assert!(index.pod_by_uid("u0").is_some());
    assert_eq!(names(&index.pods_using_claim("db", "data-db-0")), ["db-0"]);
    assert_eq!(
        names(&index.pods_using_claim("db", "db-0-scratch")),
        ["db-0"]
    );
    assert!(index.pods_using_claim("other", "data-db-0").is_empty());

    // Same name, new UID and claim (a StatefulSet replacement seen as an update).
    index.apply(pod("db", "db-0", "u1", &["data-db-0-new"], false));
    assert!(index.pod_by_uid("u0").is_none());
    assert!(index.pod_by_uid("u1").is_some());
    assert!(index.pods_using_claim("db", "data-db-0").is_empty());
    assert_eq!(index.namespace_counts("db").get("Pod"), Some(&1));

    index.delete(Kind::Pod, &ObjectKey::new("db", "db-0"));
    assert!(index.pod_by_uid("u1").is_none());
    assert!(index.pods_using_claim("db", "data-db-0-new").is_empty());
    assert!(index.namespace_counts("db").is_empty());
    assert_eq!(
        index.pods_by_claim.keys(),
        0,
        "no empty index entries left behind"
    );
}

#[test]
fn leases_follow_their_holder() {
    let mut index = Index::new();
    index.apply(lease("db", "db-leader", Some("db-0_5b7c")));
    index.apply(lease("db", "other", Some("db-01")));
    assert_eq!(names(&index.leases_held_by("db", "db-0")), ["db-leader"]);
    assert_eq!(names(&index.leases_held_by("db", "db-01")), ["other"]);
    index.apply(lease("db", "db-leader", Some("db-1_9a0e")));
    assert!(index.leases_held_by("db", "db-0").is_empty());
    assert_eq!(names(&index.leases_held_by("db", "db-1")), ["db-leader"]);
    index.apply(lease("db", "db-leader", None));
    assert!(index.leases_held_by("db", "db-1").is_empty());
}

#[test]
fn attachments_by_pv_and_node() {
    let mut index = Index::new();
    index.apply(attachment("csi-1", "pv-1", "node-a"));
    index.apply(attachment("csi-2", "pv-1", "node-b"));
    assert_eq!(
        index
            .volume_attachments_for_pv("pv-1")
            .iter()
            .map(|v| v.node_name.clone())
            .collect::<Vec<_>>(),
        ["node-a", "node-b"]
    );
    index.apply(attachment("csi-2", "pv-2", "node-a"));
    assert_eq!(index.volume_attachments_on_node("node-a").len(), 2);
    assert!(index.volume_attachments_on_node("node-b").is_empty());
    assert!(
        index.namespace_counts("").is_empty(),
        "cluster-scoped kinds are not counted"
    );
}

#[test]
fn endpoint_slices_by_pod_uid_or_ip_without_duplicates() {
    let mut index = Index::new();
    index.apply(slice(
        "shop",
        "web-abc",
        &[(Some("u0"), &["10.0.0.1"]), (Some("u1"), &["10.0.0.2"])],
    ));
    index.apply(slice("shop", "web-manual", &[(None, &["10.0.0.1"])]));
    let found = index.endpoint_slices_for_pod("u0", Some("10.0.0.1"));
    assert_eq!(names(&found), ["web-abc", "web-manual"]);
    assert_eq!(
        names(&index.endpoint_slices_for_pod("u1", None)),
        ["web-abc"]
    );
    assert!(
        index
            .endpoint_slices_for_pod("u9", Some("10.0.0.9"))
            .is_empty()
    );
}

#[test]
fn legacy_records_on_configmaps_and_endpoints() {
    let mut index = Index::new();
    index.apply(legacy(
        Kind::Endpoints,
        "kube-system",
        "kube-scheduler",
        Some("cp-1_ab"),
    ));
    index.apply(legacy(Kind::ConfigMap, "kube-system", "lock", Some("cp-1")));
    index.apply(legacy(Kind::ConfigMap, "kube-system", "plain", None));
    let records = index.legacy_leader_records("kube-system", "cp-1");
    let found: Vec<(&str, &str)> = records
        .iter()
        .map(|(k, n, _)| (k.as_str(), n.as_str()))
        .collect();
    assert_eq!(
        found,
        [("ConfigMap", "lock"), ("Endpoints", "kube-scheduler")]
    );
    assert_eq!(
        index.namespace_counts("kube-system").get("ConfigMap"),
        Some(&2)
    );
}

#[test]
fn replace_kind_drops_what_the_relist_no_longer_has() {
    let mut index = Index::new();
    index.apply(pod("a", "p0", "u0", &[], false));
    index.apply(pod("a", "p1", "u1", &["c"], false));
    index.apply(lease("a", "l", Some("p0")));
    index.replace_kind(
        Kind::Pod,
        vec![
            pod("a", "p1", "u1", &[], false),
            pod("b", "p2", "u2", &[], false),
        ],
    );
    assert!(index.pod("a", "p0").is_none());
    assert!(index.pod_by_uid("u0").is_none());
    assert!(index.pods_using_claim("a", "c").is_empty());
    assert_eq!(
        index.keys(Kind::Pod),
        [ObjectKey::new("a", "p1"), ObjectKey::new("b", "p2")]
    );
    assert_eq!(index.len(Kind::Lease), 1, "other kinds untouched");
}

#[test]
fn nameless_objects_are_ignored() {
    let mut index = Index::new();
    index.apply(pod("a", "", "u0", &[], false));
    assert!(index.is_empty());
}
