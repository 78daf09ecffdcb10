//! One [`ClusterView`] implementation for every source built on an [`Index`].
//!
//! A source only says how to read its index and whether a kind can be
//! trusted right now; the lookups themselves are shared, so the snapshot and
//! the live cache answer identically for the same objects.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::record::{
    CronJob, Deployment, EndpointSlice, Job, Lease, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, ReplicaSet, StatefulSet, VolumeAttachment,
};

use super::index::Index;
use super::kind::Kind;
use super::{ClusterView, KindStatus, Lookup, Unknown};

/// A source of cluster data held in an [`Index`].
pub trait IndexedSource: Send + Sync {
    /// Run `f` over a consistent view of the index.
    fn read<R>(&self, f: impl FnOnce(&Index) -> R) -> R;
    /// `Ok` when lookups of `kind` can be trusted right now.
    fn available(&self, kind: Kind) -> Result<(), Unknown>;
    /// The namespaced kinds whose objects namespace counts include, or why
    /// counts cannot be trusted.
    fn kinds_counted(&self) -> Result<Vec<Kind>, Unknown>;
    fn kind_status(&self) -> Vec<KindStatus>;
    /// Ready to answer: every kind synced once (live); loaded (snapshot).
    fn ready(&self) -> bool {
        self.kind_status().iter().all(|s| s.synced)
    }
}

impl<S: IndexedSource> ClusterView for S {
    fn pod(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<Pod>>> {
        self.available(Kind::Pod)?;
        Ok(self.read(|i| i.pod(namespace, name)))
    }

    fn pod_by_uid(&self, uid: &str) -> Lookup<Option<Arc<Pod>>> {
        self.available(Kind::Pod)?;
        Ok(self.read(|i| i.pod_by_uid(uid)))
    }

    fn pods_using_claim(&self, namespace: &str, claim: &str) -> Lookup<Vec<Arc<Pod>>> {
        self.available(Kind::Pod)?;
        Ok(self.read(|i| i.pods_using_claim(namespace, claim)))
    }

    fn node(&self, name: &str) -> Lookup<Option<Arc<Node>>> {
        self.available(Kind::Node)?;
        Ok(self.read(|i| i.node(name)))
    }

    fn leases_held_by(&self, namespace: &str, pod: &str) -> Lookup<Vec<Arc<Lease>>> {
        self.available(Kind::Lease)?;
        Ok(self.read(|i| i.leases_held_by(namespace, pod)))
    }

    fn legacy_leader_records(
        &self,
        namespace: &str,
        pod: &str,
    ) -> Lookup<Vec<(String, String, String)>> {
        self.available(Kind::Endpoints)?;
        self.available(Kind::ConfigMap)?;
        Ok(self.read(|i| i.legacy_leader_records(namespace, pod)))
    }

    fn volume_attachments_for_pv(&self, pv: &str) -> Lookup<Vec<Arc<VolumeAttachment>>> {
        self.available(Kind::VolumeAttachment)?;
        Ok(self.read(|i| i.volume_attachments_for_pv(pv)))
    }

    fn volume_attachments_on_node(&self, node: &str) -> Lookup<Vec<Arc<VolumeAttachment>>> {
        self.available(Kind::VolumeAttachment)?;
        Ok(self.read(|i| i.volume_attachments_on_node(node)))
    }

    fn pvc(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<PersistentVolumeClaim>>> {
        self.available(Kind::PersistentVolumeClaim)?;
        Ok(self.read(|i| i.pvc(namespace, name)))
    }

    fn pv(&self, name: &str) -> Lookup<Option<Arc<PersistentVolume>>> {
        self.available(Kind::PersistentVolume)?;
        Ok(self.read(|i| i.pv(name)))
    }

    fn replica_set(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<ReplicaSet>>> {
        self.available(Kind::ReplicaSet)?;
        Ok(self.read(|i| i.replica_set(namespace, name)))
    }

    fn deployment(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<Deployment>>> {
        self.available(Kind::Deployment)?;
        Ok(self.read(|i| i.deployment(namespace, name)))
    }

    fn stateful_set(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<StatefulSet>>> {
        self.available(Kind::StatefulSet)?;
        Ok(self.read(|i| i.stateful_set(namespace, name)))
    }

    fn job(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<Job>>> {
        self.available(Kind::Job)?;
        Ok(self.read(|i| i.job(namespace, name)))
    }

    fn cron_job(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<CronJob>>> {
        self.available(Kind::CronJob)?;
        Ok(self.read(|i| i.cron_job(namespace, name)))
    }

    fn endpoint_slices_for_pod(
        &self,
        uid: &str,
        ip: Option<&str>,
    ) -> Lookup<Vec<Arc<EndpointSlice>>> {
        self.available(Kind::EndpointSlice)?;
        Ok(self.read(|i| i.endpoint_slices_for_pod(uid, ip)))
    }

    fn namespace(&self, name: &str) -> Lookup<Option<Arc<Namespace>>> {
        self.available(Kind::Namespace)?;
        Ok(self.read(|i| i.namespace(name)))
    }

    fn namespace_counts(&self, namespace: &str) -> Lookup<BTreeMap<String, u64>> {
        let kinds = IndexedSource::kinds_counted(self)?;
        let counts = self.read(|i| i.namespace_counts(namespace));
        Ok(counts
            .into_iter()
            .filter(|(kind, _)| kinds.iter().any(|k| k.name() == kind))
            .collect())
    }

    fn counted_kinds(&self) -> Vec<String> {
        IndexedSource::kinds_counted(self)
            .map(|kinds| kinds.iter().map(|k| k.name().to_owned()).collect())
            .unwrap_or_default()
    }

    fn status(&self) -> Vec<KindStatus> {
        self.kind_status()
    }

    fn is_synced(&self) -> bool {
        self.ready()
    }
}
