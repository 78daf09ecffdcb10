//! Cleanup records (ForceDeletion) for allowed force deletions, and their verifier.

use futures::future::BoxFuture;
use k8s_openapi::jiff::Timestamp;

use crate::admission::Request;
use crate::decision::Decision;
use crate::facts::Facts;
use crate::intent::Intent;

/// The ForceDeletion spec (filled in by issue 5).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ForceDeletionSpec {}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{0}")]
    Backend(String),
}

/// Where records go: the ForceDeletion CRD, a journal file, or nowhere (review).
pub trait Recorder: Send + Sync {
    /// Create-or-get the record named from the object's UID; returns its name.
    fn record(&self, spec: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>>;
}

/// Record name derived from the deleted object's UID (idempotent across retries).
pub fn record_name(uid: &str) -> String {
    format!("fd-{uid}")
}

/// What to record for an allowed force deletion.
pub fn plan(
    _intent: &Intent,
    _facts: &Facts,
    _decision: &Decision,
    _now: Timestamp,
) -> ForceDeletionSpec {
    todo!("issue 5")
}

/// JSON patch adding `forcegate.dev/cleanup: <name>` to the request's object.
pub fn annotation_patch(_request: &Request, _name: &str) -> Option<json_patch::Patch> {
    todo!("issue 5")
}
