//! Storage: claim → volume → attachment.

use super::Meta;

/// PersistentVolumeClaim: the volume it is bound to and its access modes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistentVolumeClaim {
    pub meta: Meta,
    /// `spec.volumeName` as written.
    pub volume_name: Option<String>,
    /// `status.accessModes`, else `spec.accessModes` (what was granted,
    /// else what was asked for).
    pub access_modes: Option<Vec<String>>,
}

impl From<k8s_openapi::api::core::v1::PersistentVolumeClaim> for PersistentVolumeClaim {
    fn from(claim: k8s_openapi::api::core::v1::PersistentVolumeClaim) -> Self {
        let spec = claim.spec.unwrap_or_default();
        PersistentVolumeClaim {
            meta: claim.metadata.into(),
            volume_name: spec.volume_name,
            access_modes: claim
                .status
                .and_then(|s| s.access_modes)
                .or(spec.access_modes),
        }
    }
}

/// PersistentVolume: phase, claim and access modes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistentVolume {
    pub meta: Meta,
    pub access_modes: Option<Vec<String>>,
    pub phase: Option<String>,
    /// `namespace/name` of `spec.claimRef`.
    pub claim: Option<String>,
}

impl From<k8s_openapi::api::core::v1::PersistentVolume> for PersistentVolume {
    fn from(volume: k8s_openapi::api::core::v1::PersistentVolume) -> Self {
        let spec = volume.spec.unwrap_or_default();
        PersistentVolume {
            meta: volume.metadata.into(),
            access_modes: spec.access_modes,
            phase: volume.status.and_then(|s| s.phase),
            claim: spec.claim_ref.map(|r| {
                format!(
                    "{}/{}",
                    r.namespace.unwrap_or_default(),
                    r.name.unwrap_or_default()
                )
            }),
        }
    }
}

/// VolumeAttachment: which PV is attached to which node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeAttachment {
    pub meta: Meta,
    pub node_name: String,
    /// `spec.source.persistentVolumeName`.
    pub persistent_volume: Option<String>,
    pub attached: bool,
    /// `status.detachError.message`.
    pub detach_error: Option<String>,
}

impl From<k8s_openapi::api::storage::v1::VolumeAttachment> for VolumeAttachment {
    fn from(attachment: k8s_openapi::api::storage::v1::VolumeAttachment) -> Self {
        let status = attachment.status;
        VolumeAttachment {
            meta: attachment.metadata.into(),
            node_name: attachment.spec.node_name,
            persistent_volume: attachment.spec.source.persistent_volume_name,
            attached: status.as_ref().is_some_and(|s| s.attached),
            detach_error: status.and_then(|s| s.detach_error).and_then(|e| e.message),
        }
    }
}
