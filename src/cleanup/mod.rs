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

    /// Whether the record `name` is known to exist already, answered without
    /// waiting and counted as a record found: then its spec need not even
    /// be planned (the second admission call of a grace-0 delete, retries).
    /// `false` when unknown; the caller then plans and calls [`record`](Self::record).
    fn found(&self, _name: &str) -> bool {
        false
    }
}

/// Record name derived from the deleted object's UID (idempotent across retries).
///
/// UIDs are lowercase UUIDs, so this is `fd-<uid>`. Anything that would not
/// be a DNS-1123 subdomain is sanitized and suffixed with a hash of the
/// original, so distinct inputs keep distinct names and the result is stable.
pub fn record_name(uid: &str) -> String {
    let mut plain = String::with_capacity("fd-".len() + uid.len());
    plain.push_str("fd-");
    plain.push_str(uid);
    if is_dns1123_subdomain(&plain) {
        return plain;
    }
    const MAX: usize = 253;
    let suffix = format!("-{:016x}", fnv1a64(uid.as_bytes()));
    let mut body: String = uid
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    body.truncate(MAX - "fd-".len() - suffix.len());
    format!("fd-{body}{suffix}")
}

/// The record name for a spec: from the UID, or (UID unknown, which the API
/// server never sends for an existing object) from kind, namespace and name.
pub fn record_name_for(spec: &ForceDeletionSpec) -> String {
    let object = &spec.object;
    name_of(
        object.uid.as_deref(),
        &object.resource,
        object.namespace.as_deref(),
        &object.name,
    )
}

/// The name of the record [`plan`] would plan, without planning it.
pub fn planned_record_name(intent: &Intent, facts: &Facts) -> String {
    let target = &intent.target;
    name_of(
        planned_uid(intent, facts),
        &target.resource,
        target.namespace.as_deref(),
        &target.name,
    )
}

/// The UID a record names: the object's, or for an eviction (whose request
/// carries no pod) the pod's.
fn planned_uid<'a>(intent: &'a Intent, facts: &'a Facts) -> Option<&'a str> {
    (intent.target.uid.as_deref())
        .or(facts.pod.as_ref().map(|p| p.uid.as_str()))
        .filter(|uid| !uid.is_empty())
}

fn name_of(uid: Option<&str>, resource: &str, namespace: Option<&str>, name: &str) -> String {
    match uid.filter(|u| !u.is_empty()) {
        Some(uid) => record_name(uid),
        None => record_name(&format!("{resource}/{}/{name}", namespace.unwrap_or(""))),
    }
}

/// RFC 1123 subdomain: `.`-separated labels of `[a-z0-9-]`, alphanumeric at
/// both ends, 253 characters at most. One pass over the bytes, sixteen at
/// a time for a single label: every allowed force deletion names its
/// record, so this runs per decision.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    let bytes = name.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if bytes.len() > 253 {
        return false;
    }
    // One label, the usual case (`fd-<uid>`): a branch-free fold that LLVM
    // vectorizes, where the walk below branches on every byte.
    let one_label = (bytes.iter()).fold(true, |ok, &b| {
        ok & (b.is_ascii_lowercase() | b.is_ascii_digit() | (b == b'-'))
    });
    if one_label {
        return first != b'-' && last != b'-';
    }
    // The byte before; `.` at the start, so a label may not open with `-`.
    let mut before = b'.';
    for &byte in name.as_bytes() {
        let fits = match byte {
            b'a'..=b'z' | b'0'..=b'9' => true,
            b'-' => before != b'.',
            b'.' => before != b'.' && before != b'-',
            _ => false,
        };
        if !fits {
            return false;
        }
        before = byte;
    }
    before != b'-' && before != b'.'
}

/// Stable across builds and platforms (unlike `DefaultHasher`), so sanitized
/// names never change between releases.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
            uid: planned_uid(intent, facts).map(str::to_owned),
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
