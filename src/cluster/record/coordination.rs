//! Leader election: Leases, and the legacy leader annotation on
//! ConfigMaps and Endpoints.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;

use super::Meta;

/// The legacy leader-election record on Endpoints and ConfigMaps.
pub const LEGACY_LEADER: &str = "control-plane.alpha.kubernetes.io/leader";

/// Lease: who holds it and until when.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lease {
    pub meta: Meta,
    pub holder: Option<String>,
    pub renew_time: Option<Timestamp>,
    pub acquire_time: Option<Timestamp>,
    pub duration_seconds: Option<i32>,
}

impl From<k8s_openapi::api::coordination::v1::Lease> for Lease {
    fn from(lease: k8s_openapi::api::coordination::v1::Lease) -> Self {
        let spec = lease.spec.unwrap_or_default();
        Lease {
            meta: lease.metadata.into(),
            holder: spec.holder_identity,
            renew_time: spec.renew_time.map(|t| t.0),
            acquire_time: spec.acquire_time.map(|t| t.0),
            duration_seconds: spec.lease_duration_seconds,
        }
    }
}

/// ConfigMap or Endpoints, watched metadata-only: identity and the legacy
/// leader annotation (their `data`/`subsets` are never read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetadataOnly {
    pub meta: Meta,
    /// The [`LEGACY_LEADER`] annotation as written.
    pub leader: Option<String>,
}

impl From<ObjectMeta> for MetadataOnly {
    fn from(mut meta: ObjectMeta) -> Self {
        let leader = meta
            .annotations
            .take()
            .and_then(|mut a| a.remove(LEGACY_LEADER));
        MetadataOnly {
            meta: meta.into(),
            leader,
        }
    }
}
