//! Pods: identity, ownership, placement, addresses and claims.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::DynamicObject;
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{Meta, OwnerRef, body_part, controller_of};

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
            volumes: s.volumes.map(|volumes| {
                volumes
                    .into_iter()
                    .map(|v| Volume {
                        name: Some(v.name),
                        persistent_volume_claim: v.persistent_volume_claim.map(|c| ClaimSource {
                            claim_name: Some(c.claim_name),
                        }),
                        ephemeral: v.ephemeral.map(|_| IgnoredAny),
                    })
                    .collect()
            }),
        });
        let status = pod.status.map(|s| Status {
            phase: s.phase,
            pod_ip: s.pod_ip,
            pod_ips: s.pod_ips.map(|ips| {
                ips.into_iter()
                    .map(|ip| PodIp { ip: Some(ip.ip) })
                    .collect()
            }),
        });
        Pod::new(
            &pod.metadata,
            spec.unwrap_or_default(),
            status.unwrap_or_default(),
        )
    }
}

impl Pod {
    /// A pod as an admission request carries it (`oldObject`), reading only
    /// the fields a record keeps: a full typed `Pod` costs far more to
    /// decode (containers, env, probes) than the decision that needs it.
    pub fn from_dynamic(object: &DynamicObject) -> Result<Pod, serde_json::Error> {
        let spec: Option<Spec> = body_part(object, "pod", "spec")?;
        let status: Option<Status> = body_part(object, "pod", "status")?;
        Ok(Pod::new(
            &object.metadata,
            spec.unwrap_or_default(),
            status.unwrap_or_default(),
        ))
    }

    /// Copies only what the record keeps of `meta` (of its owner
    /// references, the controller's).
    fn new(meta: &ObjectMeta, spec: Spec, status: Status) -> Pod {
        let pod_name = meta.name.as_deref().unwrap_or_default();
        let mut claims: Vec<String> = spec
            .volumes
            .into_iter()
            .flatten()
            .filter_map(|v| match (v.persistent_volume_claim, v.ephemeral) {
                (Some(claim), _) => Some(claim.claim_name.unwrap_or_default()),
                (None, Some(_)) => Some(format!("{pod_name}-{}", v.name.unwrap_or_default())),
                (None, None) => None,
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
            pod_ips: status
                .pod_ips
                .into_iter()
                .flatten()
                .map(|ip| ip.ip.unwrap_or_default())
                .collect(),
            claims,
        }
    }
}

// The parts of `spec` and `status` a record keeps, in the API's shape.
// Required fields are optional here, as k8s-openapi decodes them (missing
// or null means empty); unknown fields are skipped unread.

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    node_name: Option<String>,
    volumes: Option<Vec<Volume>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Volume {
    name: Option<String>,
    persistent_volume_claim: Option<ClaimSource>,
    /// Only its presence matters: the claim is named after pod and volume.
    ephemeral: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaimSource {
    claim_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    phase: Option<String>,
    #[serde(rename = "podIP")]
    pod_ip: Option<String>,
    #[serde(rename = "podIPs")]
    pod_ips: Option<Vec<PodIp>>,
}

#[derive(Deserialize)]
struct PodIp {
    ip: Option<String>,
}
