//! What each object is findable by, besides namespace/name.
//!
//! One function per secondary index, shared by the index (to maintain it)
//! and by the property tests (to check it against a naive scan).

use crate::cluster::record::{EndpointSlice, Lease, MetadataOnly, Pod, VolumeAttachment};

/// Claim names a pod mounts (derived when its record is built).
pub fn pod_claims(pod: &Pod) -> &[String] {
    &pod.claims
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
    lease.holder.as_deref().filter(|h| !h.is_empty())
}

/// A legacy `control-plane.alpha.kubernetes.io/leader` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacyRecord {
    /// holderIdentity, when the annotation parses.
    pub holder: Option<String>,
    /// The annotation as written, for facts to parse times from.
    pub raw: String,
}

pub fn legacy_record(object: &MetadataOnly) -> Option<LegacyRecord> {
    let raw = object.leader.as_ref()?;
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
    va.persistent_volume.as_deref().filter(|p| !p.is_empty())
}

pub fn attachment_node(va: &VolumeAttachment) -> Option<&str> {
    Some(va.node_name.as_str()).filter(|n| !n.is_empty())
}

/// Pod UIDs an EndpointSlice's endpoints point at (targetRef of kind Pod).
pub fn slice_pod_uids(slice: &EndpointSlice) -> Vec<String> {
    let mut uids: Vec<String> = slice
        .endpoints
        .iter()
        .filter_map(|e| e.target.as_ref())
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
        .flat_map(|e| e.addresses.iter().cloned())
        .filter(|a| !a.is_empty())
        .collect();
    ips.sort();
    ips.dedup();
    ips
}

#[cfg(test)]
mod tests;
