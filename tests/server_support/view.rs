//! A cluster view and a recorder for tests that never reach facts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use forcegate::cleanup::{ForceDeletionSpec, RecordError, Recorder};
use forcegate::cluster::record::{
    CronJob, Deployment, EndpointSlice, Job, Lease, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, ReplicaSet, StatefulSet, VolumeAttachment,
};
use forcegate::cluster::{ClusterView, KindStatus, Lookup, Unknown};
use futures::future::BoxFuture;

/// Lookups the not-gated paths never make; readiness from `synced`.
pub struct StaticView {
    pub synced: bool,
}

fn unknown<T>() -> Lookup<T> {
    Err(Unknown {
        kind: "Pod".into(),
        reason: "test view holds no objects".into(),
    })
}

impl ClusterView for StaticView {
    fn pod(&self, _: &str, _: &str) -> Lookup<Option<Arc<Pod>>> {
        unknown()
    }
    fn pod_by_uid(&self, _: &str) -> Lookup<Option<Arc<Pod>>> {
        unknown()
    }
    fn pods_using_claim(&self, _: &str, _: &str) -> Lookup<Vec<Arc<Pod>>> {
        unknown()
    }
    fn node(&self, _: &str) -> Lookup<Option<Arc<Node>>> {
        unknown()
    }
    fn leases_held_by(&self, _: &str, _: &str) -> Lookup<Vec<Arc<Lease>>> {
        unknown()
    }
    fn legacy_leader_records(&self, _: &str, _: &str) -> Lookup<Vec<(String, String, String)>> {
        unknown()
    }
    fn volume_attachments_for_pv(&self, _: &str) -> Lookup<Vec<Arc<VolumeAttachment>>> {
        unknown()
    }
    fn volume_attachments_on_node(&self, _: &str) -> Lookup<Vec<Arc<VolumeAttachment>>> {
        unknown()
    }
    fn pvc(&self, _: &str, _: &str) -> Lookup<Option<Arc<PersistentVolumeClaim>>> {
        unknown()
    }
    fn pv(&self, _: &str) -> Lookup<Option<Arc<PersistentVolume>>> {
        unknown()
    }
    fn replica_set(&self, _: &str, _: &str) -> Lookup<Option<Arc<ReplicaSet>>> {
        unknown()
    }
    fn deployment(&self, _: &str, _: &str) -> Lookup<Option<Arc<Deployment>>> {
        unknown()
    }
    fn stateful_set(&self, _: &str, _: &str) -> Lookup<Option<Arc<StatefulSet>>> {
        unknown()
    }
    fn job(&self, _: &str, _: &str) -> Lookup<Option<Arc<Job>>> {
        unknown()
    }
    fn cron_job(&self, _: &str, _: &str) -> Lookup<Option<Arc<CronJob>>> {
        unknown()
    }
    fn endpoint_slices_for_pod(&self, _: &str, _: Option<&str>) -> Lookup<Vec<Arc<EndpointSlice>>> {
        unknown()
    }
    fn namespace(&self, _: &str) -> Lookup<Option<Arc<Namespace>>> {
        unknown()
    }
    fn namespace_counts(&self, _: &str) -> Lookup<BTreeMap<String, u64>> {
        unknown()
    }
    fn status(&self) -> Vec<KindStatus> {
        vec![KindStatus {
            kind: "Pod".into(),
            synced: self.synced,
            objects: 0,
            seconds_since_event: None,
            stale: false,
            last_error: (!self.synced).then(|| "watch not synced".into()),
            watch_errors: 0,
        }]
    }
}

/// Counts records and answers with the deterministic record name.
#[derive(Default)]
pub struct CountingRecorder {
    pub records: AtomicUsize,
}

impl Recorder for CountingRecorder {
    fn record(&self, spec: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>> {
        self.records.fetch_add(1, Ordering::SeqCst);
        let _ = spec;
        Box::pin(async { Ok("fd-test".to_owned()) })
    }
}
