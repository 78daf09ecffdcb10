//! What an admission request really is.
//!
//! Pure classification of an AdmissionReview into an [`Intent`]: no I/O, no
//! cluster lookups. Everything it needs is in the request itself (the user,
//! the options the API server already adjusted, object and oldObject).

use serde::Serialize;

/// The object a request acts on, as the API server named it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural resource name, e.g. `pods`.
    pub resource: String,
    /// e.g. `eviction`, `finalize`, `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    /// UID of the existing object (from oldObject), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// Who sent the request (AdmissionRequest.userInfo).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requester {
    pub username: String,
    pub groups: Vec<String>,
}

/// A system component whose own deletes and finalizer removals must never be
/// blocked (blocking them leaves objects stuck Terminating cluster-wide).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "actor")]
pub enum SystemActor {
    /// `system:node:<node>` finishing a pod bound to that very node.
    Kubelet { node: String },
    /// The pod garbage collector force-deleting orphaned pods.
    PodGc,
    /// The controller that owns the finalizer it removes (namespace, job, GC, ...).
    Controller { name: String },
}

/// What the request means for force-deletion gating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum IntentKind {
    /// A grace-0 DELETE of a pod the kubelet would otherwise finish gracefully.
    ForceDelete {
        /// The pod already had a deletionTimestamp (re-deleted with grace 0).
        already_terminating: bool,
    },
    /// `pods/eviction` CREATE whose deleteOptions ask for grace 0.
    Eviction,
    /// An UPDATE (including `pods/status`) that removes finalizers.
    FinalizerRemoval {
        removed: Vec<String>,
        /// The object already has a deletionTimestamp.
        deleting: bool,
    },
    /// UPDATE on `namespaces/finalize` that removes `spec.finalizers`.
    NamespaceFinalize { removed: Vec<String> },
    /// The kubelet, pod GC or an owning controller doing its own job.
    SystemFinalization { actor: SystemActor },
    /// Anything else; `reason` says why it is not a candidate.
    NotGated { reason: String },
}

impl IntentKind {
    /// The name policies match on (`spec.match.intents`).
    pub fn name(&self) -> &'static str {
        match self {
            IntentKind::ForceDelete { .. } => "ForceDelete",
            IntentKind::Eviction => "Eviction",
            IntentKind::FinalizerRemoval { .. } => "FinalizerRemoval",
            IntentKind::NamespaceFinalize { .. } => "NamespaceFinalize",
            IntentKind::SystemFinalization { .. } => "SystemFinalization",
            IntentKind::NotGated { .. } => "NotGated",
        }
    }

    /// Whether policies run at all for this intent.
    pub fn is_gated(&self) -> bool {
        !matches!(
            self,
            IntentKind::SystemFinalization { .. } | IntentKind::NotGated { .. }
        )
    }
}

/// A classified request: what, on which object, by whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    pub kind: IntentKind,
    pub target: ObjectRef,
    pub requester: Requester,
    /// `request.dryRun`: evaluate, but record nothing.
    pub dry_run: bool,
}

/// Classify one admission request. Pure.
pub fn classify(_request: &crate::admission::Request) -> Intent {
    todo!("issue 2")
}
