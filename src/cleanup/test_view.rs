//! A tiny in-memory [`ClusterView`] for cleanup tests (the real snapshot
//! view lives in `cluster`; this one lets a test mark kinds Unknown). It
//! holds k8s-openapi objects, as fixtures are written, and answers with
//! their records.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;

use crate::cluster::record;
use crate::cluster::{ClusterView, KindStatus, Lookup, Unknown};

/// A snapshot-backed view for tests: linear scans are fine at this size.
#[derive(Default)]
pub(crate) struct TestView {
    pub pods: Vec<Arc<Pod>>,
    pub nodes: Vec<Arc<Node>>,
    pub leases: Vec<Arc<Lease>>,
    pub attachments: Vec<Arc<VolumeAttachment>>,
    pub slices: Vec<Arc<EndpointSlice>>,
    pub jobs: Vec<Arc<Job>>,
    pub pvcs: Vec<Arc<PersistentVolumeClaim>>,
    /// Kinds whose lookups answer Unknown.
    pub unknown: Vec<&'static str>,
}

pub(crate) fn parse<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Arc<T> {
    Arc::new(serde_json::from_value(value).expect("valid fixture"))
}

impl TestView {
    fn check(&self, kind: &str) -> Result<(), Unknown> {
        if self.unknown.contains(&kind) {
            Err(Unknown {
                kind: kind.into(),
                reason: "watch not synced".into(),
            })
        } else {
            Ok(())
        }
    }
}

/// The record of a fixture object, as the index would hold it.
fn record<K: Clone + Into<R>, R>(object: &Arc<K>) -> Arc<R> {
    Arc::new(K::clone(object).into())
}

fn named<K, R>(list: &[Arc<K>], ns: Option<&str>, name: &str) -> Option<Arc<R>>
where
    K: kube::Resource + Clone + Into<R>,
{
    list.iter()
        .find(|o| o.meta().name.as_deref() == Some(name) && o.meta().namespace.as_deref() == ns)
        .map(record)
}

impl ClusterView for TestView {
    fn pod(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<record::Pod>>> {
        self.check("Pod")?;
        Ok(named(&self.pods, Some(namespace), name))
    }
    fn pod_by_uid(&self, uid: &str) -> Lookup<Option<Arc<record::Pod>>> {
        self.check("Pod")?;
        Ok(self
            .pods
            .iter()
            .find(|p| p.metadata.uid.as_deref() == Some(uid))
            .map(record))
    }
    fn pods_using_claim(&self, _: &str, _: &str) -> Lookup<Vec<Arc<record::Pod>>> {
        Ok(Vec::new())
    }
    fn node(&self, name: &str) -> Lookup<Option<Arc<record::Node>>> {
        self.check("Node")?;
        Ok(named(&self.nodes, None, name))
    }
    fn leases_held_by(&self, namespace: &str, pod: &str) -> Lookup<Vec<Arc<record::Lease>>> {
        self.check("Lease")?;
        let prefix = format!("{pod}_");
        Ok(self
            .leases
            .iter()
            .filter(|l| l.metadata.namespace.as_deref() == Some(namespace))
            .filter(|l| {
                let holder = l
                    .spec
                    .as_ref()
                    .and_then(|s| s.holder_identity.as_deref())
                    .unwrap_or("");
                holder == pod || holder.starts_with(&prefix)
            })
            .map(record)
            .collect())
    }
    fn legacy_leader_records(&self, _: &str, _: &str) -> Lookup<Vec<(String, String, String)>> {
        Ok(Vec::new())
    }
    fn volume_attachments_for_pv(&self, pv: &str) -> Lookup<Vec<Arc<record::VolumeAttachment>>> {
        self.check("VolumeAttachment")?;
        Ok(self
            .attachments
            .iter()
            .filter(|va| va.spec.source.persistent_volume_name.as_deref() == Some(pv))
            .map(record)
            .collect())
    }
    fn volume_attachments_on_node(&self, node: &str) -> Lookup<Vec<Arc<record::VolumeAttachment>>> {
        Ok(self
            .attachments
            .iter()
            .filter(|va| va.spec.node_name == node)
            .map(record)
            .collect())
    }
    fn pvc(
        &self,
        namespace: &str,
        name: &str,
    ) -> Lookup<Option<Arc<record::PersistentVolumeClaim>>> {
        Ok(named(&self.pvcs, Some(namespace), name))
    }
    fn pv(&self, _: &str) -> Lookup<Option<Arc<record::PersistentVolume>>> {
        Ok(None)
    }
    fn replica_set(&self, _: &str, _: &str) -> Lookup<Option<Arc<record::ReplicaSet>>> {
        Ok(None)
    }
    fn deployment(&self, _: &str, _: &str) -> Lookup<Option<Arc<record::Deployment>>> {
        Ok(None)
    }
    fn stateful_set(&self, _: &str, _: &str) -> Lookup<Option<Arc<record::StatefulSet>>> {
        Ok(None)
    }
    fn job(&self, namespace: &str, name: &str) -> Lookup<Option<Arc<record::Job>>> {
        self.check("Job")?;
        Ok(named(&self.jobs, Some(namespace), name))
    }
    fn cron_job(&self, _: &str, _: &str) -> Lookup<Option<Arc<record::CronJob>>> {
        Ok(None)
    }
    fn endpoint_slices_for_pod(
        &self,
        uid: &str,
        ip: Option<&str>,
    ) -> Lookup<Vec<Arc<record::EndpointSlice>>> {
        self.check("EndpointSlice")?;
        Ok(self
            .slices
            .iter()
            .filter(|s| {
                s.endpoints.iter().flatten().any(|e| {
                    e.target_ref.as_ref().and_then(|r| r.uid.as_deref()) == Some(uid)
                        || ip.is_some_and(|ip| e.addresses.iter().any(|a| a == ip))
                })
            })
            .map(record)
            .collect())
    }
    fn namespace(&self, _: &str) -> Lookup<Option<Arc<record::Namespace>>> {
        Ok(None)
    }
    fn namespace_counts(&self, _: &str) -> Lookup<BTreeMap<String, u64>> {
        Ok(BTreeMap::new())
    }
    fn status(&self) -> Vec<KindStatus> {
        Vec::new()
    }
}
