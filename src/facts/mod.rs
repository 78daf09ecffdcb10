//! What policies ask about, derived purely from a [`ClusterView`] and the request.
//!
//! Each fact group is `None` either because it does not apply (a namespace
//! finalize has no pod) or because it cannot be known; the latter is listed in
//! [`Facts::unknown`] under the group's name so policies can apply `onUnknown`.

use std::collections::BTreeMap;

use serde::Serialize;

use k8s_openapi::jiff::Timestamp;

use crate::admission::Request;
use crate::cluster::{ClusterView, Unknown};
use crate::intent::{Intent, IntentKind};

mod endpoints;
pub mod finalizers;
mod identity;
mod leader;
mod namespace;
mod node;
mod owners;
mod pod;
mod request;
mod volumes;

/// Everything policies can read under `facts.*`. Serialized (camelCase) into
/// the policy evaluation context, so field names are part of the policy API.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    /// The acted-on object as the cluster view holds it; records are named
    /// from its UID. Unknown when the view lacks the object or disagrees
    /// with the request about it.
    pub identity: Option<IdentityFacts>,
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
pub struct IdentityFacts {
    /// `metadata.uid` of the cached object.
    pub uid: String,
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
    /// metadata.finalizers as the pod has them now.
    pub finalizers: Vec<String>,
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
    /// The Ready condition's status as written (`True`, `False`, `Unknown`).
    pub ready_status: Option<String>,
    /// Keys of the node's taints.
    pub taints: Vec<String>,
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
    /// The Job object exists (false: only the pod's ownerReference names it).
    pub exists: bool,
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
    /// Attached on some other node (e.g. already moved to a replacement).
    pub attached_elsewhere: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeFacts {
    pub claims: Vec<ClaimVolume>,
    /// Any claim's PV is attached on the pod's node.
    pub attached_on_pod_node: bool,
    /// Any claim's PV is attached on a node other than the pod's.
    pub attached_elsewhere: bool,
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
    /// The kinds `counts` covers: "empty" means empty of these.
    pub counted_kinds: Vec<String>,
}

/// Derive the facts relevant to `intent` from the request and the cluster.
///
/// Pure: reads only its arguments. A group that cannot be known is `None`
/// and listed in [`Facts::unknown`]; a group that does not apply is `None`
/// and not listed.
pub fn gather(intent: &Intent, request: &Request, view: &dyn ClusterView, now: Timestamp) -> Facts {
    gather_for(intent, request, view, now, Needs::ALL)
}

/// Fact groups gathered only when asked for: no cleanup record uses them,
/// so they are worth their lookups only when a policy reads them (the
/// EndpointSlice lookups cost an eighth of a force delete's decision, and
/// no shipped policy reads `facts.endpoints`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    pub endpoints: bool,
}

impl Needs {
    /// Every group.
    pub const ALL: Needs = Needs { endpoints: true };
}

/// [`gather`], skipping the optional groups `needs` leaves out (they stay
/// `None`: nothing reads them).
pub fn gather_for(
    intent: &Intent,
    request: &Request,
    view: &dyn ClusterView,
    now: Timestamp,
    needs: Needs,
) -> Facts {
    let mut facts = Facts::default();
    if intent.kind.is_gated() {
        identity::gather(&mut facts, intent, view);
    }
    match &intent.kind {
        IntentKind::ForceDelete { .. } | IntentKind::Eviction => {
            let scope = PodScope::Full { needs };
            pod::gather_for_pod(&mut facts, intent, request, view, now, scope);
        }
        IntentKind::FinalizerRemoval { removed, .. } => {
            facts.finalizers = finalizers::describe(removed);
            match target_kind(intent) {
                TargetKind::Pod => {
                    pod::gather_for_pod(
                        &mut facts,
                        intent,
                        request,
                        view,
                        now,
                        PodScope::Ownership,
                    );
                }
                TargetKind::Claim => volumes::gather_claim(&mut facts, intent, request, view),
                TargetKind::Volume => volumes::gather_volume(&mut facts, intent, request, view),
                TargetKind::Namespace => namespace::gather(&mut facts, intent, request, view),
                TargetKind::Other => {}
            }
        }
        IntentKind::NamespaceFinalize { removed } => {
            facts.finalizers = finalizers::describe(removed);
            namespace::gather(&mut facts, intent, request, view);
        }
        IntentKind::SystemFinalization { .. } | IntentKind::NotGated { .. } => {}
    }
    facts
}

/// Which fact groups a pod request needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PodScope {
    /// Force delete / eviction: everything a ghost pod can leave behind
    /// (the optional groups as `needs` says).
    Full { needs: Needs },
    /// Finalizer removal on a pod: who owns it and where it runs.
    Ownership,
}

enum TargetKind {
    Pod,
    Claim,
    Volume,
    Namespace,
    Other,
}

fn target_kind(intent: &Intent) -> TargetKind {
    let target = &intent.target;
    if !target.group.is_empty() {
        return TargetKind::Other;
    }
    match (target.kind.as_str(), target.resource.as_str()) {
        ("Pod", _) | (_, "pods") => TargetKind::Pod,
        ("PersistentVolumeClaim", _) | (_, "persistentvolumeclaims") => TargetKind::Claim,
        ("PersistentVolume", _) | (_, "persistentvolumes") => TargetKind::Volume,
        ("Namespace", _) | (_, "namespaces") => TargetKind::Namespace,
        _ => TargetKind::Other,
    }
}

impl Facts {
    /// Record that `group` cannot be known.
    fn unknown(&mut self, group: &str, why: Unknown) {
        self.unknown.insert(group.to_owned(), why);
    }
}

/// Seconds from `then` to `now` (negative when `then` is in the future).
fn seconds_since(then: Timestamp, now: Timestamp) -> i64 {
    now.as_second() - then.as_second()
}

#[cfg(test)]
mod tests;
