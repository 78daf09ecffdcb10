//! The indexed store both sources share.
//!
//! Objects go in through [`Index::apply`] / [`Index::delete`] /
//! [`Index::replace_kind`], which keep every secondary index in step, so the
//! live source can maintain it one watch event at a time and the snapshot
//! source can build it file by file. Every lookup is a hash probe plus a walk
//! over the (small) matching set: nothing scans all objects of a kind.

pub mod keys;
mod multimap;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::cluster::record::{
    CronJob, Deployment, EndpointSlice, Job, Lease, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, ReplicaSet, StatefulSet, VolumeAttachment,
};

use self::keys::LegacyRecord;
use self::multimap::MultiMap;
use super::kind::Kind;
use super::object::{Object, ObjectKey};

/// A hash map on foldhash, seeded once per process: every lookup hashes a
/// namespace and a name, and SipHash (std's default) was a twentieth of a
/// decision. Seeded, so names chosen by a tenant still cannot predict buckets.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

type Store<T> = FastMap<ObjectKey, Arc<T>>;

/// Cached objects of every known kind plus the secondary indexes facts need.
#[derive(Debug, Default)]
pub struct Index {
    pods: Store<Pod>,
    nodes: Store<Node>,
    leases: Store<Lease>,
    attachments: Store<VolumeAttachment>,
    claims: Store<PersistentVolumeClaim>,
    volumes: Store<PersistentVolume>,
    jobs: Store<Job>,
    cron_jobs: Store<CronJob>,
    stateful_sets: Store<StatefulSet>,
    replica_sets: Store<ReplicaSet>,
    deployments: Store<Deployment>,
    slices: Store<EndpointSlice>,
    namespaces: Store<Namespace>,
    config_maps: FastMap<ObjectKey, Option<LegacyRecord>>,
    endpoints: FastMap<ObjectKey, Option<LegacyRecord>>,

    pod_by_uid: FastMap<String, ObjectKey>,
    /// (namespace, claim) → names of pods mounting it.
    pods_by_claim: MultiMap<ObjectKey, String>,
    /// (namespace, holder pod) → lease names.
    leases_by_holder: MultiMap<ObjectKey, String>,
    /// (namespace, holder pod) → (ConfigMap|Endpoints, name).
    legacy_by_holder: MultiMap<ObjectKey, (Kind, String)>,
    attachments_by_pv: MultiMap<String, String>,
    attachments_by_node: MultiMap<String, String>,
    slices_by_pod_uid: MultiMap<String, ObjectKey>,
    slices_by_ip: MultiMap<String, ObjectKey>,
    /// namespace → kind → objects, maintained on insert/delete.
    namespace_counts: FastMap<String, BTreeMap<Kind, u64>>,
}

impl Index {
    pub fn new() -> Self {
        Self::default()
    }

    /// Insert or replace one object, keeping every index consistent.
    /// Objects without a name cannot be addressed and are ignored.
    pub fn apply(&mut self, object: Object) {
        let key = object.key();
        if key.name.is_empty() {
            return;
        }
        let kind = object.kind();
        let replaced = match object {
            Object::Pod(o) => {
                let new = o;
                let old = self.pods.insert(key.clone(), new.clone());
                if let Some(old) = &old {
                    self.unindex_pod(&key, old);
                }
                self.index_pod(&key, &new);
                old.is_some()
            }
            Object::Node(o) => self.nodes.insert(key.clone(), o).is_some(),
            Object::Lease(o) => {
                let new = o;
                let old = self.leases.insert(key.clone(), new.clone());
                if let Some(holder) = old.as_deref().and_then(keys::lease_holder) {
                    unindex_holder(&mut self.leases_by_holder, &key, holder, &key.name);
                }
                if let Some(holder) = keys::lease_holder(&new) {
                    index_holder(&mut self.leases_by_holder, &key, holder, key.name.clone());
                }
                old.is_some()
            }
            Object::VolumeAttachment(o) => {
                let new = o;
                let old = self.attachments.insert(key.clone(), new.clone());
                if let Some(old) = &old {
                    self.unindex_attachment(&key.name, old);
                }
                self.index_attachment(&key.name, &new);
                old.is_some()
            }
            Object::PersistentVolumeClaim(o) => self.claims.insert(key.clone(), o).is_some(),
            Object::PersistentVolume(o) => self.volumes.insert(key.clone(), o).is_some(),
            Object::Job(o) => self.jobs.insert(key.clone(), o).is_some(),
            Object::CronJob(o) => self.cron_jobs.insert(key.clone(), o).is_some(),
            Object::StatefulSet(o) => self.stateful_sets.insert(key.clone(), o).is_some(),
            Object::ReplicaSet(o) => self.replica_sets.insert(key.clone(), o).is_some(),
            Object::Deployment(o) => self.deployments.insert(key.clone(), o).is_some(),
            Object::EndpointSlice(o) => {
                let new = o;
                let old = self.slices.insert(key.clone(), new.clone());
                if let Some(old) = &old {
                    self.unindex_slice(&key, old);
                }
                self.index_slice(&key, &new);
                old.is_some()
            }
            Object::Namespace(o) => self.namespaces.insert(key.clone(), o).is_some(),
            Object::ConfigMap(object) | Object::Endpoints(object) => {
                let record = keys::legacy_record(&object);
                let store = match kind {
                    Kind::ConfigMap => &mut self.config_maps,
                    _ => &mut self.endpoints,
                };
                let old = store.insert(key.clone(), record.clone());
                if let Some(holder) = old.as_ref().and_then(|r| r.as_ref()?.holder.clone()) {
                    unindex_holder(
                        &mut self.legacy_by_holder,
                        &key,
                        &holder,
                        &(kind, key.name.clone()),
                    );
                }
                if let Some(holder) = record.and_then(|r| r.holder) {
                    index_holder(
                        &mut self.legacy_by_holder,
                        &key,
                        &holder,
                        (kind, key.name.clone()),
                    );
                }
                old.is_some()
            }
        };
        if !replaced {
            self.count(kind, &key.namespace, true);
        }
    }

    /// Remove one object (no-op when absent).
    pub fn delete(&mut self, kind: Kind, key: &ObjectKey) {
        let removed = match kind {
            Kind::Pod => self
                .pods
                .remove(key)
                .map(|old| self.unindex_pod(key, &old))
                .is_some(),
            Kind::Node => self.nodes.remove(key).is_some(),
            Kind::Lease => {
                let old = self.leases.remove(key);
                if let Some(holder) = old.as_deref().and_then(keys::lease_holder) {
                    unindex_holder(&mut self.leases_by_holder, key, holder, &key.name);
                }
                old.is_some()
            }
            Kind::VolumeAttachment => self
                .attachments
                .remove(key)
                .map(|old| self.unindex_attachment(&key.name, &old))
                .is_some(),
            Kind::PersistentVolumeClaim => self.claims.remove(key).is_some(),
            Kind::PersistentVolume => self.volumes.remove(key).is_some(),
            Kind::Job => self.jobs.remove(key).is_some(),
            Kind::CronJob => self.cron_jobs.remove(key).is_some(),
            Kind::StatefulSet => self.stateful_sets.remove(key).is_some(),
            Kind::ReplicaSet => self.replica_sets.remove(key).is_some(),
            Kind::Deployment => self.deployments.remove(key).is_some(),
            Kind::EndpointSlice => self
                .slices
                .remove(key)
                .map(|old| self.unindex_slice(key, &old))
                .is_some(),
            Kind::Namespace => self.namespaces.remove(key).is_some(),
            Kind::ConfigMap | Kind::Endpoints => {
                let store = match kind {
                    Kind::ConfigMap => &mut self.config_maps,
                    _ => &mut self.endpoints,
                };
                let old = store.remove(key);
                if let Some(holder) = old.as_ref().and_then(|r| r.as_ref()?.holder.clone()) {
                    unindex_holder(
                        &mut self.legacy_by_holder,
                        key,
                        &holder,
                        &(kind, key.name.clone()),
                    );
                }
                old.is_some()
            }
        };
        if removed {
            self.count(kind, &key.namespace, false);
        }
    }

    /// Make `objects` the complete set of `kind` (a watch re-list): objects
    /// not in it are deleted, the rest applied.
    pub fn replace_kind(&mut self, kind: Kind, objects: Vec<Object>) {
        let incoming: std::collections::HashSet<ObjectKey> = objects
            .iter()
            .filter(|o| o.kind() == kind)
            .map(Object::key)
            .collect();
        for key in self.keys(kind) {
            if !incoming.contains(&key) {
                self.delete(kind, &key);
            }
        }
        for object in objects.into_iter().filter(|o| o.kind() == kind) {
            self.apply(object);
        }
    }

    /// Keys of every cached object of `kind`, sorted.
    pub fn keys(&self, kind: Kind) -> Vec<ObjectKey> {
        fn sorted<V>(map: &FastMap<ObjectKey, V>) -> Vec<ObjectKey> {
            let mut keys: Vec<ObjectKey> = map.keys().cloned().collect();
            keys.sort();
            keys
        }
        match kind {
            Kind::Pod => sorted(&self.pods),
            Kind::Node => sorted(&self.nodes),
            Kind::Lease => sorted(&self.leases),
            Kind::VolumeAttachment => sorted(&self.attachments),
            Kind::PersistentVolumeClaim => sorted(&self.claims),
            Kind::PersistentVolume => sorted(&self.volumes),
            Kind::Job => sorted(&self.jobs),
            Kind::CronJob => sorted(&self.cron_jobs),
            Kind::StatefulSet => sorted(&self.stateful_sets),
            Kind::ReplicaSet => sorted(&self.replica_sets),
            Kind::Deployment => sorted(&self.deployments),
            Kind::EndpointSlice => sorted(&self.slices),
            Kind::Namespace => sorted(&self.namespaces),
            Kind::ConfigMap => sorted(&self.config_maps),
            Kind::Endpoints => sorted(&self.endpoints),
        }
    }

    /// Number of cached objects of `kind`.
    pub fn len(&self, kind: Kind) -> usize {
        match kind {
            Kind::Pod => self.pods.len(),
            Kind::Node => self.nodes.len(),
            Kind::Lease => self.leases.len(),
            Kind::VolumeAttachment => self.attachments.len(),
            Kind::PersistentVolumeClaim => self.claims.len(),
            Kind::PersistentVolume => self.volumes.len(),
            Kind::Job => self.jobs.len(),
            Kind::CronJob => self.cron_jobs.len(),
            Kind::StatefulSet => self.stateful_sets.len(),
            Kind::ReplicaSet => self.replica_sets.len(),
            Kind::Deployment => self.deployments.len(),
            Kind::EndpointSlice => self.slices.len(),
            Kind::Namespace => self.namespaces.len(),
            Kind::ConfigMap => self.config_maps.len(),
            Kind::Endpoints => self.endpoints.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        Kind::ALL.iter().all(|k| self.len(*k) == 0)
    }

    fn count(&mut self, kind: Kind, namespace: &str, added: bool) {
        if !kind.namespaced() {
            return;
        }
        if added {
            *self
                .namespace_counts
                .entry(namespace.to_owned())
                .or_default()
                .entry(kind)
                .or_default() += 1;
            return;
        }
        if let Some(counts) = self.namespace_counts.get_mut(namespace) {
            if let Some(n) = counts.get_mut(&kind) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    counts.remove(&kind);
                }
            }
            if counts.is_empty() {
                self.namespace_counts.remove(namespace);
            }
        }
    }

    fn index_pod(&mut self, key: &ObjectKey, pod: &Pod) {
        if let Some(uid) = pod.meta.uid.as_deref().filter(|u| !u.is_empty()) {
            self.pod_by_uid.insert(uid.to_owned(), key.clone());
        }
        for claim in keys::pod_claims(pod) {
            self.pods_by_claim
                .insert(ObjectKey::new(&key.namespace, claim), key.name.clone());
        }
    }

    fn unindex_pod(&mut self, key: &ObjectKey, pod: &Pod) {
        if let Some(uid) = pod.meta.uid.as_deref()
            && self.pod_by_uid.get(uid) == Some(key)
        {
            self.pod_by_uid.remove(uid);
        }
        for claim in keys::pod_claims(pod) {
            self.pods_by_claim
                .remove(&ObjectKey::new(&key.namespace, claim), &key.name);
        }
    }

    fn index_attachment(&mut self, name: &str, va: &VolumeAttachment) {
        if let Some(pv) = keys::attachment_pv(va) {
            self.attachments_by_pv
                .insert(pv.to_owned(), name.to_owned());
        }
        if let Some(node) = keys::attachment_node(va) {
            self.attachments_by_node
                .insert(node.to_owned(), name.to_owned());
        }
    }

    fn unindex_attachment(&mut self, name: &str, va: &VolumeAttachment) {
        let name = name.to_owned();
        if let Some(pv) = keys::attachment_pv(va) {
            self.attachments_by_pv.remove(pv, &name);
        }
        if let Some(node) = keys::attachment_node(va) {
            self.attachments_by_node.remove(node, &name);
        }
    }

    fn index_slice(&mut self, key: &ObjectKey, slice: &EndpointSlice) {
        for uid in keys::slice_pod_uids(slice) {
            self.slices_by_pod_uid.insert(uid, key.clone());
        }
        for ip in keys::slice_addresses(slice) {
            self.slices_by_ip.insert(ip, key.clone());
        }
    }

    fn unindex_slice(&mut self, key: &ObjectKey, slice: &EndpointSlice) {
        for uid in keys::slice_pod_uids(slice) {
            self.slices_by_pod_uid.remove(uid.as_str(), key);
        }
        for ip in keys::slice_addresses(slice) {
            self.slices_by_ip.remove(ip.as_str(), key);
        }
    }
}

fn index_holder<V: Ord>(map: &mut MultiMap<ObjectKey, V>, key: &ObjectKey, holder: &str, value: V) {
    if let Some(pod) = keys::holder_pod(holder) {
        map.insert(ObjectKey::new(&key.namespace, pod), value);
    }
}

fn unindex_holder<V: Ord>(
    map: &mut MultiMap<ObjectKey, V>,
    key: &ObjectKey,
    holder: &str,
    value: &V,
) {
    if let Some(pod) = keys::holder_pod(holder) {
        map.remove(&ObjectKey::new(&key.namespace, pod), value);
    }
}

mod lookups;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod proptests;
