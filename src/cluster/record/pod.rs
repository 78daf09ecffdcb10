//! Pods: identity, ownership, placement, addresses and claims.

use std::collections::BTreeMap;

use super::{Meta, OwnerRef, controller_of};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// What facts, the checklist and the index read of a pod. Values are kept
/// as written (possibly empty); readers decide what empty means.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pod {
    pub meta: Meta,
    pub labels: BTreeMap<String, String>,
    pub controller: Option<OwnerRef>,
    pub finalizers: Vec<String>,
    /// Has a `deletionTimestamp`.
    pub terminating: bool,
    pub node_name: Option<String>,
    pub phase: Option<String>,
    pub pod_ip: Option<String>,
    /// `status.podIPs[].ip`.
    pub pod_ips: Vec<String>,
    /// Claims it mounts: `persistentVolumeClaim.claimName`, and
    /// `<pod>-<volume>` for generic ephemeral volumes (how the ephemeral
    /// volume controller names them); sorted, without empty names.
    pub claims: Vec<String>,
}

impl From<k8s_openapi::api::core::v1::Pod> for Pod {
    fn from(pod: k8s_openapi::api::core::v1::Pod) -> Self {
        let spec = pod.spec.map(|s| Spec {
            node_name: s.node_name,
            volumes: s
                .volumes
                .into_iter()
                .flatten()
                .map(|v| Volume {
                    name: Some(v.name),
                    claim: v.persistent_volume_claim.map(|c| c.claim_name),
                    ephemeral: v.ephemeral.is_some(),
                })
                .collect(),
        });
        let status = pod.status.map(|s| Status {
            phase: s.phase,
            pod_ip: s.pod_ip,
            pod_ips: s.pod_ips.into_iter().flatten().map(|ip| ip.ip).collect(),
        });
        Pod::new(
            &pod.metadata,
            spec.unwrap_or_default(),
            status.unwrap_or_default(),
        )
    }
}

impl Pod {
    /// Copies only what the record keeps of `meta` (of its owner
    /// references, the controller's).
    fn new(meta: &ObjectMeta, spec: Spec, status: Status) -> Pod {
        let pod_name = meta.name.as_deref().unwrap_or_default();
        let mut claims: Vec<String> = spec
            .volumes
            .into_iter()
            .filter_map(|v| match (v.claim, v.ephemeral) {
                (Some(claim), _) => Some(claim),
                (None, true) => Some(format!("{pod_name}-{}", v.name.unwrap_or_default())),
                (None, false) => None,
            })
            .filter(|c| !c.is_empty())
            .collect();
        claims.sort();
        claims.dedup();
        Pod {
            labels: meta.labels.clone().unwrap_or_default(),
            controller: controller_of(meta.owner_references.as_deref()),
            finalizers: meta.finalizers.clone().unwrap_or_default(),
            terminating: meta.deletion_timestamp.is_some(),
            meta: meta.into(),
            node_name: spec.node_name,
            phase: status.phase,
            pod_ip: status.pod_ip,
            pod_ips: status.pod_ips,
            claims,
        }
    }
}

// The parts of `spec` and `status` a record keeps. Required fields are
// optional here, as k8s-openapi decodes them (missing or null means empty).

#[derive(Default)]
struct Spec {
    node_name: Option<String>,
    volumes: Vec<Volume>,
}

struct Volume {
    /// Kept for ephemeral volumes only (their claim is named after it).
    name: Option<String>,
    /// `persistentVolumeClaim.claimName` (empty when unnamed), if it is one.
    claim: Option<String>,
    /// An ephemeral volume: its claim is named after pod and volume.
    ephemeral: bool,
}

#[derive(Default)]
struct Status {
    phase: Option<String>,
    pod_ip: Option<String>,
    /// `podIPs[].ip`, empty where absent.
    pod_ips: Vec<String>,
}
