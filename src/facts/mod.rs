//! What policies ask about, derived purely from a [`ClusterView`] and the request.
//!
//! Each fact group is `None` either because it does not apply (a namespace
//! finalize has no pod) or because it cannot be known; the latter is listed in
//! [`Facts::unknown`] under the group's name so policies can apply `onUnknown`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cluster::Unknown;

/// Everything policies can read under `facts.*`. Serialized (camelCase) into
/// the policy evaluation context, so field names are part of the policy API.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    pub pod: Option<PodFacts>,
    pub node: Option<NodeFacts>,
    pub owners: Option<OwnerFacts>,
    pub leader: Option<LeaderFacts>,
    pub volumes: Option<VolumeFacts>,
    pub endpoints: Option<EndpointFacts>,
    /// One entry per finalizer the request removes.
    pub finalizers: Vec<FinalizerFacts>,
    /// For PVC finalizer removal: who still uses the claim.
    pub claim: Option<ClaimFacts>,
    /// For PV finalizer removal: binding and attachment.
    pub persistent_volume: Option<PersistentVolumeFacts>,
    pub namespace: Option<NamespaceFacts>,
    /// Fact group name (`node`, `leader`, `volumes`, ...) → why it is unknown.
    pub unknown: BTreeMap<String, Unknown>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodFacts {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub node_name: Option<String>,
    pub pod_ip: Option<String>,
    pub pod_ips: Vec<String>,
    pub phase: Option<String>,
    pub terminating: bool,
    pub labels: BTreeMap<String, String>,
    pub claims: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeFacts {
    pub name: String,
    pub exists: bool,
    /// Ready condition status is "True".
    pub ready: bool,
    /// Seconds since the Ready condition's lastHeartbeatTime.
    pub heartbeat_age_seconds: Option<i64>,
    /// Carries `node.kubernetes.io/unreachable` (the node stopped reporting).
    pub unreachable: bool,
    /// Carries `node.kubernetes.io/out-of-service`.
    pub out_of_service: bool,
    /// Gone, or out-of-service: its workloads can no longer be running.
    pub fenced: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerRef {
    pub kind: String,
    pub name: String,
    pub uid: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerFacts {
    /// From the pod's controller up to the root (e.g. ReplicaSet, Deployment).
    pub chain: Vec<OwnerRef>,
    pub stateful_set: Option<String>,
    pub job: Option<JobFacts>,
    pub cron_job: Option<CronJobFacts>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobFacts {
    pub name: String,
    pub active: i32,
    pub succeeded: i32,
    pub failed: i32,
    /// Has a Complete or Failed condition with status True.
    pub finished: bool,
    /// The pod still carries `batch.kubernetes.io/job-tracking`.
    pub tracking_finalizer: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJobFacts {
    pub name: String,
    pub concurrency_policy: String,
    pub suspend: bool,
    pub active: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseFacts {
    pub namespace: String,
    pub name: String,
    pub holder: String,
    pub expired: bool,
    /// Seconds until expiry (negative once expired).
    pub expires_in_seconds: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderFacts {
    /// Holds an unexpired Lease or a legacy leader record.
    pub is_leader: bool,
    pub leases: Vec<LeaseFacts>,
    /// Legacy `control-plane.alpha.kubernetes.io/leader` records: `Kind/name`.
    pub legacy_records: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentFacts {
    pub name: String,
    pub node: String,
    pub attached: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimVolume {
    pub claim: String,
    pub persistent_volume: Option<String>,
    pub access_modes: Vec<String>,
    pub attachments: Vec<AttachmentFacts>,
    /// Attached on the pod's own node.
    pub attached_on_pod_node: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeFacts {
    pub claims: Vec<ClaimVolume>,
    /// Any claim's PV is attached on the pod's node.
    pub attached_on_pod_node: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointFacts {
    /// EndpointSlices still referencing the pod (by UID or IP).
    pub slices: Vec<String>,
    pub referenced: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinalizerFacts {
    pub name: String,
    /// The controller that owns it, e.g. `job-controller`, `pvc-protection-controller`.
    pub owner: Option<String>,
    /// Usernames allowed to remove it as system finalization.
    pub owner_users: Vec<String>,
    /// Built into Kubernetes (`kubernetes.io/*`, `foregroundDeletion`, `orphan`, ...).
    pub well_known: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimFacts {
    pub namespace: String,
    pub name: String,
    pub volume_name: Option<String>,
    /// Non-terminal pods (not Succeeded/Failed) that mount the claim.
    pub used_by: Vec<String>,
    pub in_use: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeFacts {
    pub name: String,
    pub phase: Option<String>,
    pub bound: bool,
    pub claim: Option<String>,
    pub attached: bool,
    pub attachments: Vec<AttachmentFacts>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceFacts {
    pub name: String,
    pub exists: bool,
    pub phase: Option<String>,
    /// Objects per kind still in the namespace (kinds the view knows).
    pub counts: BTreeMap<String, u64>,
    pub total: u64,
    pub empty: bool,
}

/// Derive the facts relevant to `intent` from the request and the cluster.
pub fn gather(
    _intent: &crate::intent::Intent,
    _request: &crate::admission::Request,
    _view: &dyn crate::cluster::ClusterView,
    _now: k8s_openapi::jiff::Timestamp,
) -> Facts {
    todo!("issue 3")
}
