//! Cleanup records (ForceDeletion) for allowed force deletions, and their verifier.
//!
//! Admission only *plans* a record ([`plan`], pure) and hands it to a
//! [`Recorder`]: the CRD when live ([`KubeRecorder`]), an fsynced journal file
//! when standalone ([`JournalRecorder`]), nowhere for `review`/`test`
//! ([`NoopRecorder`]). Records are named from the object's UID so the double
//! admission call of a grace-0 delete, and retries, write once.

use futures::future::BoxFuture;
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::admission::Request;
use crate::decision::Decision;
use crate::facts::Facts;
use crate::intent::{Intent, IntentKind};

pub mod checklist;
pub mod crd;
#[cfg(test)]
mod fake_api;
pub mod journal;
pub mod kube;
pub mod leader;
mod manual;
pub mod metrics;
pub mod noop;
pub mod status;
#[cfg(test)]
mod test_view;
pub mod verifier;

pub use self::crd::{
    ChecklistItem, FiredPolicy, ForceDeletion, ForceDeletionSpec, ForceDeletionStatus, ItemState,
    ObjectReference, Phase, RecordCondition, RecordedAction, RecordedAttachment, RecordedLease,
    RecordedOwner, RecordedRequester, RecordedVolume,
};
pub use self::journal::{JournalRecorder, Recovery};
pub use self::kube::{KubeRecorder, apply_crd};
pub use self::metrics::CleanupMetrics;
pub use self::noop::NoopRecorder;
pub use self::verifier::VerifierSettings;

/// Annotation that links a stripped object to its ForceDeletion record.
pub const CLEANUP_ANNOTATION: &str = "forcegate.dev/cleanup";

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{0}")]
    Backend(String),
    #[error("journal {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("journal {path}:{line}: {reason} (not a torn last line: refusing to guess)")]
    Corrupt {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("journal {path} is locked by another process")]
    Locked { path: String },
    #[error("cannot encode the record: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("kubernetes API: {0}")]
    Api(#[from] ::kube::Error),
}

/// Where records go: the ForceDeletion CRD, a journal file, or nowhere (review).
pub trait Recorder: Send + Sync {
    /// Create-or-get the record named from the object's UID; returns its name.
    fn record(&self, spec: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>>;
}

pub use crate::record_name::record_name;

/// The record name for a spec: from the UID, or (UID unknown, which the API
/// server never sends for an existing object) from kind, namespace and name.
pub fn record_name_for(spec: &ForceDeletionSpec) -> String {
    let object = &spec.object;
    crate::record_name::of_object(
        object.uid.as_deref(),
        &object.resource,
        object.namespace.as_deref(),
        &object.name,
    )
}

/// What to record for an allowed force deletion. Pure.
pub fn plan(
    intent: &Intent,
    facts: &Facts,
    decision: &Decision,
    now: Timestamp,
) -> ForceDeletionSpec {
    let target = &intent.target;
    let pod = facts.pod.as_ref();
    let kind = if target.kind.is_empty() {
        target.resource.clone()
    } else {
        target.kind.clone()
    };
    let subject = match &target.namespace {
        Some(ns) if !ns.is_empty() => format!("{kind} {ns}/{}", target.name),
        _ => format!("{kind} {}", target.name),
    };
    let mut pod_ips: Vec<String> = Vec::new();
    for ip in pod
        .into_iter()
        .flat_map(|p| p.pod_ip.iter().chain(p.pod_ips.iter()))
    {
        if !ip.is_empty() && !pod_ips.contains(ip) {
            pod_ips.push(ip.clone());
        }
    }
    let volumes = facts
        .volumes
        .iter()
        .flat_map(|v| v.claims.iter())
        .map(|claim| RecordedVolume {
            claim: claim.claim.clone(),
            persistent_volume: claim.persistent_volume.clone(),
            access_modes: claim.access_modes.clone(),
            attachments: claim
                .attachments
                .iter()
                .map(|a| RecordedAttachment {
                    name: a.name.clone(),
                    node: a.node.clone(),
                    attached: a.attached,
                })
                .collect(),
        })
        .collect();
    let leases = facts
        .leader
        .iter()
        .flat_map(|l| l.leases.iter())
        .map(|l| RecordedLease {
            namespace: l.namespace.clone(),
            name: l.name.clone(),
            holder: l.holder.clone(),
            expired: l.expired,
        })
        .collect();
    let owners: Vec<RecordedOwner> = facts
        .owners
        .iter()
        .flat_map(|o| o.chain.iter())
        .map(|o| RecordedOwner {
            kind: o.kind.clone(),
            name: o.name.clone(),
            uid: o.uid.clone(),
        })
        .collect();
    let job = facts
        .owners
        .as_ref()
        .and_then(|o| o.job.as_ref().map(|j| j.name.clone()))
        .or_else(|| {
            owners
                .iter()
                .find(|o| o.kind == "Job")
                .map(|o| o.name.clone())
        });
    let node = pod
        .and_then(|p| p.node_name.clone())
        .or_else(|| facts.node.as_ref().map(|n| n.name.clone()))
        .filter(|n| !n.is_empty());
    ForceDeletionSpec {
        subject,
        object: ObjectReference {
            group: target.group.clone(),
            version: target.version.clone(),
            kind,
            resource: target.resource.clone(),
            subresource: target.subresource.clone(),
            namespace: target.namespace.clone().filter(|ns| !ns.is_empty()),
            name: target.name.clone(),
            uid: facts.identity.as_ref().map(|identity| identity.uid.clone()),
        },
        action: recorded_action(&intent.kind),
        node,
        pod_ips,
        volumes,
        leases,
        owners,
        job,
        requester: RecordedRequester {
            username: intent.requester.username.clone(),
            groups: intent.requester.groups.clone(),
        },
        break_glass_reason: decision.break_glass.clone(),
        requested_at: Time(now),
        policies: decision
            .outcomes
            .iter()
            .map(|o| FiredPolicy {
                policy: o.policy.to_string(),
                action: o.action,
                fact: o.fact.clone(),
                unknown: o.unknown,
            })
            .collect(),
    }
}

fn recorded_action(kind: &IntentKind) -> RecordedAction {
    let (removed_finalizers, object_deleting) = match kind {
        IntentKind::ForceDelete { .. } | IntentKind::Eviction => (Vec::new(), true),
        IntentKind::FinalizerRemoval { removed, deleting } => (removed.clone(), *deleting),
        // Only a terminating namespace can be finalized.
        IntentKind::NamespaceFinalize { removed } => (removed.clone(), true),
        IntentKind::SystemFinalization { .. } | IntentKind::NotGated { .. } => (Vec::new(), false),
    };
    RecordedAction {
        type_: kind.name().to_string(),
        removed_finalizers,
        object_deleting,
    }
}

/// JSON patch adding `forcegate.dev/cleanup: <name>` to the request's object.
///
/// `None` when there is no object, or it already carries that exact
/// annotation (a retried UPDATE needs no second patch).
pub fn annotation_patch(request: &Request, name: &str) -> Option<Patch> {
    let object = request.object.as_ref()?;
    let annotations = object.metadata.annotations.as_ref();
    if annotations
        .and_then(|a| a.get(CLEANUP_ANNOTATION))
        .map(String::as_str)
        == Some(name)
    {
        return None;
    }
    let operation = match annotations {
        Some(_) => AddOperation {
            path: PointerBuf::from_tokens(["metadata", "annotations", CLEANUP_ANNOTATION]),
            value: serde_json::Value::String(name.to_string()),
        },
        None => AddOperation {
            path: PointerBuf::from_tokens(["metadata", "annotations"]),
            value: serde_json::json!({ CLEANUP_ANNOTATION: name }),
        },
    };
    Some(Patch(vec![PatchOperation::Add(operation)]))
}

#[cfg(test)]
mod tests;
