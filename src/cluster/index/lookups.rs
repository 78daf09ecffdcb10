//! Read side of the [`Index`]: the answers behind every `ClusterView` method,
//! before availability (synced, stale, in the snapshot) is considered.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cluster::record::{
    CronJob, Deployment, EndpointSlice, Job, Lease, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, ReplicaSet, StatefulSet, VolumeAttachment,
};

use super::{Index, keys};
use crate::cluster::kind::Kind;
use crate::cluster::object::{ObjectKey, key};

impl Index {
    pub fn pod(&self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.pods.get(key(&(namespace, name))).cloned()
    }

    pub fn pod_by_uid(&self, uid: &str) -> Option<Arc<Pod>> {
        self.pod_by_uid
            .get(uid)
            .and_then(|key| self.pods.get(key))
            .cloned()
    }

    /// Pods (any phase) mounting `namespace/claim`, sorted by name.
    pub fn pods_using_claim(&self, namespace: &str, claim: &str) -> Vec<Arc<Pod>> {
        self.pods_by_claim
            .get(key(&(namespace, claim)))
            .filter_map(|pod| self.pods.get(key(&(namespace, pod))))
            .cloned()
            .collect()
    }

    pub fn node(&self, name: &str) -> Option<Arc<Node>> {
        self.nodes.get(key(&("", name))).cloned()
    }

    /// Leases in `namespace` held by `pod` (holderIdentity `pod` or `pod_…`).
    pub fn leases_held_by(&self, namespace: &str, pod: &str) -> Vec<Arc<Lease>> {
        self.leases_by_holder
            .get(key(&(namespace, pod)))
            .filter_map(|name| self.leases.get(key(&(namespace, name))))
            .filter(|lease| keys::lease_holder(lease).is_some_and(|h| keys::holder_matches(h, pod)))
            .cloned()
            .collect()
    }

    /// Legacy leader records in `namespace` naming `pod`: (kind, name, raw annotation).
    pub fn legacy_leader_records(
        &self,
        namespace: &str,
        pod: &str,
    ) -> Vec<(String, String, String)> {
        self.legacy_by_holder
            .get(key(&(namespace, pod)))
            .filter_map(|(kind, name)| {
                let store = match kind {
                    Kind::ConfigMap => &self.config_maps,
                    _ => &self.endpoints,
                };
                let record = store.get(key(&(namespace, name)))?.as_ref()?;
                let holder = record.holder.as_deref()?;
                keys::holder_matches(holder, pod)
                    .then(|| (kind.name().to_owned(), name.clone(), record.raw.clone()))
            })
            .collect()
    }

    pub fn volume_attachments_for_pv(&self, pv: &str) -> Vec<Arc<VolumeAttachment>> {
        self.attachments_by_pv
            .get(pv)
            .filter_map(|name| self.attachments.get(key(&("", name))))
            .cloned()
            .collect()
    }

    pub fn volume_attachments_on_node(&self, node: &str) -> Vec<Arc<VolumeAttachment>> {
        self.attachments_by_node
            .get(node)
            .filter_map(|name| self.attachments.get(key(&("", name))))
            .cloned()
            .collect()
    }

    pub fn pvc(&self, namespace: &str, name: &str) -> Option<Arc<PersistentVolumeClaim>> {
        self.claims.get(key(&(namespace, name))).cloned()
    }

    pub fn pv(&self, name: &str) -> Option<Arc<PersistentVolume>> {
        self.volumes.get(key(&("", name))).cloned()
    }

    pub fn replica_set(&self, namespace: &str, name: &str) -> Option<Arc<ReplicaSet>> {
        self.replica_sets.get(key(&(namespace, name))).cloned()
    }

    pub fn deployment(&self, namespace: &str, name: &str) -> Option<Arc<Deployment>> {
        self.deployments.get(key(&(namespace, name))).cloned()
    }

    pub fn stateful_set(&self, namespace: &str, name: &str) -> Option<Arc<StatefulSet>> {
        self.stateful_sets.get(key(&(namespace, name))).cloned()
    }

    pub fn job(&self, namespace: &str, name: &str) -> Option<Arc<Job>> {
        self.jobs.get(key(&(namespace, name))).cloned()
    }

    pub fn cron_job(&self, namespace: &str, name: &str) -> Option<Arc<CronJob>> {
        self.cron_jobs.get(key(&(namespace, name))).cloned()
    }

    /// EndpointSlices with an endpoint targeting pod `uid` or listing `ip`,
    /// sorted by namespace/name, without duplicates.
    pub fn endpoint_slices_for_pod(&self, uid: &str, ip: Option<&str>) -> Vec<Arc<EndpointSlice>> {
        let mut keys: Vec<&ObjectKey> = self.slices_by_pod_uid.get(uid).collect();
        if let Some(ip) = ip.filter(|ip| !ip.is_empty()) {
            keys.extend(self.slices_by_ip.get(ip));
        }
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter_map(|key| self.slices.get(key))
            .cloned()
            .collect()
    }

    pub fn namespace(&self, name: &str) -> Option<Arc<Namespace>> {
        self.namespaces.get(key(&("", name))).cloned()
    }

    /// Objects per kind in `namespace` (kinds with none are absent).
    pub fn namespace_counts(&self, namespace: &str) -> BTreeMap<String, u64> {
        self.namespace_counts
            .get(namespace)
            .into_iter()
            .flatten()
            .map(|(kind, n)| (kind.name().to_owned(), *n))
            .collect()
    }
}
