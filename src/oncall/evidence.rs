//! What `stuck` diagnoses from: plain data built from an [`Inventory`],
//! whether that came from snapshot files or from the API server.
//!
//! Only what a diagnosis reads is kept. A kind missing from the inventory
//! stays missing here too ([`Evidence::has`]), so a diagnosis can say
//! "cannot tell" instead of mistaking "not read" for "none".

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use super::inventory::{Gap, Inventory, group_kind, str_at};

mod candidates;
mod convert;

/// `Kind.group` names of the kinds evidence reads.
pub mod kinds {
    pub const POD: &str = "Pod";
    pub const NODE: &str = "Node";
    pub const CLAIM: &str = "PersistentVolumeClaim";
    pub const VOLUME: &str = "PersistentVolume";
    pub const ATTACHMENT: &str = "VolumeAttachment.storage.k8s.io";
    pub const NAMESPACE: &str = "Namespace";
    pub const API_SERVICE: &str = "APIService.apiregistration.k8s.io";
    pub const VALIDATING: &str = "ValidatingWebhookConfiguration.admissionregistration.k8s.io";
    pub const MUTATING: &str = "MutatingWebhookConfiguration.admissionregistration.k8s.io";
    pub const SLICE: &str = "EndpointSlice.discovery.k8s.io";
    pub const DEPLOYMENT: &str = "Deployment.apps";
    pub const STATEFUL_SET: &str = "StatefulSet.apps";
    pub const DAEMON_SET: &str = "DaemonSet.apps";
    pub const LEASE: &str = "Lease.coordination.k8s.io";
}

/// Everything a diagnosis may consult, as of `now`.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub now: Timestamp,
    /// Objects with a deletionTimestamp, of any kind.
    pub terminating: Vec<Terminating>,
    pub nodes: BTreeMap<String, NodeState>,
    pub pods: Vec<PodState>,
    /// (namespace, name) → claim.
    pub claims: BTreeMap<(String, String), ClaimState>,
    pub volumes: BTreeMap<String, VolumeState>,
    pub attachments: Vec<AttachmentState>,
    pub namespaces: BTreeMap<String, NamespaceState>,
    pub api_services: Vec<ApiServiceState>,
    pub webhooks: Vec<WebhookState>,
    /// (namespace, Service) → ready endpoints listed by its EndpointSlices.
    pub ready_endpoints: BTreeMap<(String, String), usize>,
    /// Workloads, pods and Leases: evidence that a controller runs.
    pub candidates: Vec<Candidate>,
    /// namespace → `Kind.group` → objects still in it.
    pub contents: BTreeMap<String, BTreeMap<String, u64>>,
    /// Kinds read completely (`Kind.group`).
    pub complete: BTreeSet<String>,
    pub gaps: Vec<Gap>,
}

/// An object with a deletionTimestamp.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Terminating {
    pub api_version: String,
    pub kind: String,
    /// `Kind.group`.
    pub group_kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    pub uid: String,
    /// For pods, the end of the grace period; for others, when deletion began.
    pub deletion_timestamp: Timestamp,
    pub finalizers: Vec<String>,
    /// A namespace's `spec.finalizers` (`kubernetes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spec_finalizers: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeState {
    pub name: String,
    /// The Ready condition's status (`True`, `False`, `Unknown`).
    pub ready: Option<String>,
    pub ready_since: Option<Timestamp>,
    pub heartbeat: Option<Timestamp>,
    /// Tainted `node.kubernetes.io/out-of-service`.
    pub fenced: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodState {
    pub namespace: String,
    pub name: String,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub claims: Vec<String>,
    pub terminating: bool,
    /// Ready condition True.
    pub ready: bool,
}

impl PodState {
    /// Succeeded or Failed: it uses nothing any more.
    pub fn terminal(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Succeeded" | "Failed"))
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClaimState {
    pub namespace: String,
    pub name: String,
    pub volume: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct VolumeState {
    pub name: String,
    pub phase: Option<String>,
    /// (namespace, name) of the claim it is bound to.
    pub claim: Option<(String, String)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttachmentState {
    pub name: String,
    pub volume: String,
    pub node: String,
    pub attached: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamespaceState {
    pub name: String,
    pub phase: Option<String>,
    pub conditions: Vec<Condition>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApiServiceState {
    pub name: String,
    /// (namespace, name); `None` for APIs the API server serves itself.
    pub service: Option<(String, String)>,
    /// The Available condition.
    pub available: Option<Condition>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebhookState {
    /// `ValidatingWebhookConfiguration/<name>` or `MutatingWebhookConfiguration/<name>`.
    pub configuration: String,
    pub name: String,
    /// `Fail` unless set (the API default).
    pub failure_policy: String,
    pub service: Option<(String, String)>,
    pub operations: BTreeSet<String>,
    /// `resource.group` patterns its rules cover, as written (`*` allowed).
    pub resources: Vec<String>,
}

/// Something whose running proves a controller alive.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Deployment, StatefulSet, DaemonSet, Pod or Lease.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Lowercase name, namespace, app labels, images and holder, matched
    /// against a finalizer's domain.
    #[serde(skip)]
    pub haystack: String,
    pub alive: bool,
    /// e.g. `1/1 ready`, `scaled to 0`, `renewed 4s ago`, `expired 2h ago`.
    pub state: String,
}

impl Evidence {
    /// Build from an inventory. Objects that do not decode as their kind
    /// become gaps rather than errors: one bad object must not hide the rest.
    pub fn build(inventory: &Inventory, now: Timestamp) -> Evidence {
        let mut evidence = Evidence {
            now,
            complete: inventory.complete.clone(),
            gaps: inventory.gaps.clone(),
            ..Evidence::default()
        };
        for object in &inventory.objects {
            let api_version = str_at(object, &["apiVersion"]);
            let kind = str_at(object, &["kind"]);
            let namespace = str_at(object, &["metadata", "namespace"]);
            if !namespace.is_empty() {
                *evidence
                    .contents
                    .entry(namespace.to_owned())
                    .or_default()
                    .entry(group_kind(api_version, kind))
                    .or_default() += 1;
            }
            if let Some(terminating) = convert::terminating(object) {
                evidence.terminating.push(terminating);
            }
            if let Err(reason) = convert::add(&mut evidence, &group_kind(api_version, kind), object)
            {
                let name = str_at(object, &["metadata", "name"]);
                evidence.gaps.push(Gap {
                    what: format!("{kind} {namespace}/{name}"),
                    reason: format!("does not decode: {reason}"),
                });
            }
        }
        evidence.terminating.sort_by(|a, b| {
            (&a.namespace, &a.group_kind, &a.name).cmp(&(&b.namespace, &b.group_kind, &b.name))
        });
        evidence
    }

    /// Whether every object of `Kind.group` was read.
    pub fn has(&self, group_kind: &str) -> bool {
        self.complete.contains(group_kind)
    }

    /// The reason `Kind.group` could not be read, when a gap says so.
    pub fn gap(&self, group_kind: &str) -> Option<&Gap> {
        self.gaps.iter().find(|g| g.what == group_kind)
    }

    /// "Deployments were not read (forbidden)"-style text for a missing kind.
    pub fn missing(&self, group_kind: &str) -> String {
        match self.gap(group_kind) {
            Some(gap) => format!("{group_kind} could not be read ({})", gap.reason),
            None => format!("{group_kind} is not in the data read"),
        }
    }
}

/// A JSON object as its typed kind, or why it is not one.
fn decode<T: serde::de::DeserializeOwned>(object: &serde_json::Value) -> Result<T, String> {
    serde_json::from_value(object.clone()).map_err(|e| e.to_string())
}
