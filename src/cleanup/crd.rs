//! The `ForceDeletion` custom resource: one record per allowed force deletion.
//!
//! The spec is written once at admission (what was deleted, where it ran, what
//! it held, who asked and why); the status belongs to the verifier. The same
//! types back the standalone journal, so a record reads the same everywhere.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::decision::Action;

/// What forcegate recorded when it allowed a force deletion.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "forcegate.dev",
    version = "v1alpha1",
    kind = "ForceDeletion",
    plural = "forcedeletions",
    singular = "forcedeletion",
    shortname = "fd",
    category = "forcegate",
    status = "ForceDeletionStatus",
    doc = "A force deletion forcegate allowed, and the verification of its aftermath.",
    // Raw JSON: the structured form repeats `type_ = ...`, which clippy flags.
    printcolumn = r#"{"name":"Object","type":"string","jsonPath":".spec.subject","description":"Kind, namespace and name of the deleted or stripped object"}"#,
    printcolumn = r#"{"name":"Node","type":"string","jsonPath":".spec.node","description":"Node the pod was bound to"}"#,
    printcolumn = r#"{"name":"Requester","type":"string","jsonPath":".spec.requester.username"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ForceDeletionSpec {
    /// `Kind namespace/name`, for `kubectl get forcedeletions` and messages.
    pub subject: String,
    /// The object as the API server named it, with its UID.
    pub object: ObjectReference,
    /// What was allowed: a force delete, an eviction, a finalizer strip.
    pub action: RecordedAction,
    /// Node the pod was bound to (where the ghost may live on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Pod IPs at deletion time (IPAM and EndpointSlices may still hold them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_ips: Vec<String>,
    /// Claims of the pod, their PVs and VolumeAttachments at deletion time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<RecordedVolume>,
    /// Leases the pod held at deletion time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leases: Vec<RecordedLease>,
    /// From the pod's controller up to the root owner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<RecordedOwner>,
    /// Job the pod belonged to, whose counts must settle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    pub requester: RecordedRequester,
    /// The break-glass reason, when break-glass allowed the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_glass_reason: Option<String>,
    /// When forcegate admitted the request.
    #[schemars(schema_with = "date_time")]
    pub requested_at: Time,
    /// Policies that fired on the request (including overridden denials).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<FiredPolicy>,
}

/// The target object; `resource`/`subresource` keep the API server's naming.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// API group, empty for the core group.
    #[serde(default)]
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural resource, e.g. `pods`.
    pub resource: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    /// UID of the object; the record is named from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// The kind of force deletion, with what it removed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedAction {
    /// `ForceDelete`, `Eviction`, `FinalizerRemoval` or `NamespaceFinalize`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Finalizers the request removed (finalizer strips, namespace finalize).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_finalizers: Vec<String>,
    /// The object is on its way out (deleted, or stripped while terminating):
    /// the verifier waits for it to be gone.
    pub object_deleting: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedVolume {
    pub claim: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<RecordedAttachment>,
}

/// A VolumeAttachment of the claim's PV as seen at deletion time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedAttachment {
    pub name: String,
    pub node: String,
    pub attached: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedLease {
    pub namespace: String,
    pub name: String,
    pub holder: String,
    /// Already expired when the pod was deleted.
    pub expired: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedOwner {
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedRequester {
    pub username: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FiredPolicy {
    pub policy: String,
    pub action: Action,
    /// The fact that triggered it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fact: String,
    /// Fired because a fact was unknown (`onUnknown`).
    #[serde(default)]
    pub unknown: bool,
}

/// Where verification stands. A record without status is `Pending`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Phase {
    /// Recorded, not verified yet.
    #[default]
    Pending,
    /// Some checks are still pending.
    Verifying,
    /// Everything the API can show is cleaned up.
    Clean,
    /// A check failed, or the record is not clean after the deadline.
    NeedsAttention,
}

impl Phase {
    pub const ALL: [Phase; 4] = [
        Phase::Pending,
        Phase::Verifying,
        Phase::Clean,
        Phase::NeedsAttention,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Verifying => "Verifying",
            Phase::Clean => "Clean",
            Phase::NeedsAttention => "NeedsAttention",
        }
    }
}

/// The verifier's view of the record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForceDeletionStatus {
    pub phase: Phase,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<RecordCondition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<ChecklistItem>,
    /// When the verifier last evaluated the checklist with a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "date_time")]
    pub last_checked: Option<Time>,
}

/// A Kubernetes-style condition (`Clean`, `DeadlineExceeded`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordCondition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[schemars(schema_with = "date_time")]
    pub last_transition_time: Time,
}

/// One thing to verify about the aftermath.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistItem {
    /// Stable identifier, e.g. `object-gone`, `volume-detached/pvc-1234`.
    pub name: String,
    pub state: ItemState,
    pub message: String,
    /// What to run (on the node, for `manual` items) to check or fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemState {
    /// Verified through the API.
    Ok,
    /// Not yet; expected to resolve on its own (a controller is behind).
    Pending,
    /// A hazard that will not resolve on its own.
    Failed,
    /// Node-side; the API cannot show it. A human runs the command.
    Manual,
}

/// `Time` has no JsonSchema here; it is an RFC 3339 string on the wire.
fn date_time(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "format": "date-time" })
}

/// `manifests/crd.yaml` as it must read: generated from these types, so the
/// schema never drifts from the code (a test compares the two).
pub fn crd_manifest() -> Result<String, serde_saphyr::SerializeError> {
    use kube::CustomResourceExt;
    let yaml = serde_saphyr::to_string(&ForceDeletion::crd())?;
    Ok(format!(
        "# Generated from src/cleanup/crd.rs; do not edit.\n\
         # Regenerate: FORCEGATE_UPDATE_MANIFESTS=1 cargo test --test cleanup_crd\n\
         {yaml}"
    ))
}
