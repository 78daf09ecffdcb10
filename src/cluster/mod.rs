//! The cluster as policies see it: indexed, read-only lookups.
//!
//! Two sources implement [`ClusterView`]: snapshot files (`kubectl get -o
//! yaml|json` output) and live kube-rs watch caches. Lookups never call the
//! API server; they are O(1) or O(log n) over indexes kept up to date.
//!
//! - [`index`]: the indexed store both sources feed ([`object::Object`]s in).
//! - [`record`]: the compact per-kind records the index stores and lookups
//!   return: only the fields facts and cleanup read, converted once on the
//!   way in, so a 10k-pod cache is a fraction of the k8s-openapi structs.
//! - [`snapshot::SnapshotCluster`]: files and directories, loaded once.
//! - [`live::LiveCluster`]: list/watch caches with sync and staleness tracking.
//! - [`metrics::ClusterMetrics`]: per-kind gauges read at scrape time.

pub mod index;
pub mod kind;
pub mod live;
pub mod metrics;
pub mod object;
pub mod record;
pub mod snapshot;
mod view;

pub use kind::Kind;
pub use live::LiveCluster;
pub use object::{Object, ObjectKey};
pub use snapshot::SnapshotCluster;
pub use view::IndexedSource;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use self::record::{
    CronJob, Deployment, EndpointSlice, Job, Lease, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, ReplicaSet, StatefulSet, VolumeAttachment,
};

/// Why a lookup could not be answered truthfully. Policies apply `onUnknown`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{kind}: {reason}")]
pub struct Unknown {
    /// The kind whose data is missing or stale, e.g. `VolumeAttachment`.
    pub kind: String,
    /// e.g. "not in the snapshot", "watch not synced", "stale for 93s".
    pub reason: String,
}

/// A lookup answer: `Ok` is the truth as far as the view knows it.
pub type Lookup<T> = Result<T, Unknown>;

/// Sync state of one kind, for readiness and metrics.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KindStatus {
    pub kind: String,
    pub synced: bool,
    pub objects: usize,
    /// Seconds since the last watch event (None for snapshots).
    pub seconds_since_event: Option<f64>,
    /// Facts depending on this kind are Unknown until it recovers.
    pub stale: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// List/watch failures since start (always 0 for snapshots).
    pub watch_errors: u64,
}

/// Read-only, indexed lookups the facts need, answering with [`record`]s.
/// Implementations must not scan all objects of a kind per call.
pub trait ClusterView: Send + Sync {
    fn pod(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<Pod>>>;
    fn pod_by_uid(&self, uid: &str) -> Lookup<Option<Arc<Pod>>>;
    /// Pods (any phase) that mount the claim `namespace/claim`.
    fn pods_using_claim(&self, namespace: &str, claim: &str) -> Lookup<Vec<Arc<Pod>>>;
    fn node(&self, name: &str) -> Lookup<Option<Arc<Node>>>;
    /// Leases in `namespace` whose holderIdentity is `pod` or starts with `<pod>_`.
    fn leases_held_by(&self, namespace: &str, pod: &str) -> Lookup<Vec<Arc<Lease>>>;
    /// Legacy `control-plane.alpha.kubernetes.io/leader` records (Endpoints,
    /// ConfigMaps) in `namespace` whose holderIdentity matches `pod` as above:
    /// `(kind, name, raw annotation)`.
    fn legacy_leader_records(
        &self,
        namespace: &str,
        pod: &str,
    ) -> Lookup<Vec<(String, String, String)>>;
    fn volume_attachments_for_pv(&self, pv: &str) -> Lookup<Vec<Arc<VolumeAttachment>>>;
    fn volume_attachments_on_node(&self, node: &str) -> Lookup<Vec<Arc<VolumeAttachment>>>;
    fn pvc(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<PersistentVolumeClaim>>>;
    fn pv(&self, name: &str) -> Lookup<Option<Arc<PersistentVolume>>>;
    fn replica_set(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<ReplicaSet>>>;
    fn deployment(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<Deployment>>>;
    fn stateful_set(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<StatefulSet>>>;
    fn job(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<Job>>>;
    fn cron_job(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<CronJob>>>;
    /// EndpointSlices with an endpoint whose targetRef is the pod UID or whose
    /// addresses contain `ip`.
    fn endpoint_slices_for_pod(
        &self,
        uid: &str,
        ip: Option<&str>,
    ) -> Lookup<Vec<Arc<EndpointSlice>>>;
    fn namespace(&self, name: &str) -> Lookup<Option<Arc<Namespace>>>;
    /// Objects per kind in a namespace (only kinds this view knows).
    fn namespace_counts(&self, namespace: &str) -> Lookup<BTreeMap<String, u64>>;
    /// The kinds [`ClusterView::namespace_counts`] counts, so "empty" can say
    /// what it checked. Empty when counts are unknown.
    fn counted_kinds(&self) -> Vec<String> {
        Vec::new()
    }
    /// Per-kind sync state for `/readyz` and metrics.
    fn status(&self) -> Vec<KindStatus>;
    /// True once every source kind has synced at least once.
    fn is_synced(&self) -> bool {
        self.status().iter().all(|s| s.synced)
    }
}
