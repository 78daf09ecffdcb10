//! What each object is findable by, besides namespace/name.
//!
//! One function per secondary index, shared by the index (to maintain it)
//! and by the property tests (to check it against a naive scan).

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::cluster::slim::LEGACY_LEADER;

/// Claim names a pod mounts: `persistentVolumeClaim.claimName`, and
/// `<pod>-<volume>` for generic ephemeral volumes (how the ephemeral volume
/// controller names them).
pub fn pod_claims(pod: &Pod) -> Vec<String> {
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    let mut claims: Vec<String> = pod
        .spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| {
            if let Some(pvc) = &v.persistent_volume_claim {
                Some(pvc.claim_name.clone())
            } else if v.ephemeral.is_some() {
                Some(format!("{pod_name}-{}", v.name))
            } else {
                None
            }
        })
        .filter(|c| !c.is_empty())
        .collect();
    claims.sort();
    claims.dedup();
    claims
}

/// The pod a holderIdentity names: leader election writes either the pod
/// name or `<pod>_<uuid>`. Pod names cannot contain `_`, so the part before
/// the first `_` is the candidate pod name.
pub fn holder_pod(holder_identity: &str) -> Option<&str> {
    let pod = holder_identity.split('_').next().unwrap_or_default();
    (!pod.is_empty()).then_some(pod)
}

/// Whether `holder_identity` designates `pod` (exactly, or `<pod>_…`).
pub fn holder_matches(holder_identity: &str, pod: &str) -> bool {
    !pod.is_empty()
        && (holder_identity == pod
            || holder_identity
                .strip_prefix(pod)
                .is_some_and(|rest| rest.starts_with('_')))
}

pub fn lease_holder(lease: &Lease) -> Option<&str> {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .filter(|h| !h.is_empty())
}

/// A legacy `control-plane.alpha.kubernetes.io/leader` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacyRecord {
    /// holderIdentity, when the annotation parses.
    pub holder: Option<String>,
    /// The annotation as written, for facts to parse times from.
    pub raw: String,
}

pub fn legacy_record(meta: &ObjectMeta) -> Option<LegacyRecord> {
    let raw = meta.annotations.as_ref()?.get(LEGACY_LEADER)?;
    let holder = serde_json::from_str::<serde_json::Value>(raw)
        .ok()
        .and_then(|v| {
            v.get("holderIdentity")
                .and_then(|h| h.as_str())
                .map(str::to_owned)
        })
        .filter(|h| !h.is_empty());
    Some(LegacyRecord {
        holder,
        raw: raw.clone(),
    })
}

pub fn attachment_pv(va: &VolumeAttachment) -> Option<&str> {
    va.spec
        .source
        .persistent_volume_name
        .as_deref()
        .filter(|p| !p.is_empty())
}

pub fn attachment_node(va: &VolumeAttachment) -> Option<&str> {
    Some(va.spec.node_name.as_str()).filter(|n| !n.is_empty())
}

/// Pod UIDs an EndpointSlice's endpoints point at (targetRef of kind Pod).
pub fn slice_pod_uids(slice: &EndpointSlice) -> Vec<String> {
    let mut uids: Vec<String> = slice
        .endpoints
        .iter()
        .flatten()
        .filter_map(|e| e.target_ref.as_ref())
        .filter(|r| r.kind.as_deref().is_none_or(|k| k == "Pod"))
        .filter_map(|r| r.uid.clone())
        .filter(|u| !u.is_empty())
        .collect();
    uids.sort();
    uids.dedup();
    uids
}

pub fn slice_addresses(slice: &EndpointSlice) -> Vec<String> {
    let mut ips: Vec<String> = slice
        .endpoints
        .iter()
        .flatten()
        .flat_map(|e| e.addresses.iter().cloned())
        .filter(|a| !a.is_empty())
        .collect();
    ips.sort();
    ips.dedup();
    ips
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_identity_forms() {
        assert_eq!(holder_pod("db-0_4f1c"), Some("db-0"));
        assert_eq!(holder_pod("db-0"), Some("db-0"));
        assert_eq!(holder_pod("_x"), None);
        assert!(holder_matches("db-0_4f1c", "db-0"));
        assert!(holder_matches("db-0", "db-0"));
        assert!(!holder_matches("db-01_4f1c", "db-0"));
        assert!(!holder_matches("db-0-x", "db-0"));
        assert!(!holder_matches("db-0", ""));
    }

    #[test]
    fn legacy_record_parses_holder() {
        let meta = ObjectMeta {
            annotations: Some(
                [(
                    LEGACY_LEADER.to_owned(),
                    r#"{"holderIdentity":"ctrl-7d9f_abc","leaseDurationSeconds":15}"#.to_owned(),
                )]
                .into_iter()
                .collect(),
            ),
            ..ObjectMeta::default()
        };
        let record = legacy_record(&meta).expect("record");
        assert_eq!(record.holder.as_deref(), Some("ctrl-7d9f_abc"));
        let garbage = ObjectMeta {
            annotations: Some(
                [(LEGACY_LEADER.to_owned(), "{".to_owned())]
                    .into_iter()
                    .collect(),
            ),
            ..ObjectMeta::default()
        };
        assert_eq!(legacy_record(&garbage).and_then(|r| r.holder), None);
    }
}
