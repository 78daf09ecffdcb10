//! One typed, slimmed object of a known kind: the unit both sources feed
//! into the [`Index`](super::index::Index).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::kind::Kind;
use super::slim;

/// Where an object lives: namespace (empty for cluster-scoped kinds) and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Key of a cluster-scoped object.
    pub fn cluster(name: &str) -> Self {
        Self::new("", name)
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

/// A known object. ConfigMaps and Endpoints are metadata-only: facts only
/// read their leader annotation.
///
/// Objects are held in `Arc`s from the start: k8s-openapi structs are large
/// inline (a `Pod` is ~2.4 KiB before any string), so batches of objects
/// move as pointers and the index stores them without another copy.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    Pod(Arc<Pod>),
    Node(Arc<Node>),
    Lease(Arc<Lease>),
    VolumeAttachment(Arc<VolumeAttachment>),
    PersistentVolumeClaim(Arc<PersistentVolumeClaim>),
    PersistentVolume(Arc<PersistentVolume>),
    Job(Arc<Job>),
    CronJob(Arc<CronJob>),
    StatefulSet(Arc<StatefulSet>),
    ReplicaSet(Arc<ReplicaSet>),
    Deployment(Arc<Deployment>),
    EndpointSlice(Arc<EndpointSlice>),
    Namespace(Arc<Namespace>),
    ConfigMap(Arc<ObjectMeta>),
    Endpoints(Arc<ObjectMeta>),
}

impl Object {
    pub fn kind(&self) -> Kind {
        match self {
            Object::Pod(_) => Kind::Pod,
            Object::Node(_) => Kind::Node,
            Object::Lease(_) => Kind::Lease,
            Object::VolumeAttachment(_) => Kind::VolumeAttachment,
            Object::PersistentVolumeClaim(_) => Kind::PersistentVolumeClaim,
            Object::PersistentVolume(_) => Kind::PersistentVolume,
            Object::Job(_) => Kind::Job,
            Object::CronJob(_) => Kind::CronJob,
            Object::StatefulSet(_) => Kind::StatefulSet,
            Object::ReplicaSet(_) => Kind::ReplicaSet,
            Object::Deployment(_) => Kind::Deployment,
            Object::EndpointSlice(_) => Kind::EndpointSlice,
            Object::Namespace(_) => Kind::Namespace,
            Object::ConfigMap(_) => Kind::ConfigMap,
            Object::Endpoints(_) => Kind::Endpoints,
        }
    }

    pub fn meta(&self) -> &ObjectMeta {
        match self {
            Object::Pod(o) => &o.metadata,
            Object::Node(o) => &o.metadata,
            Object::Lease(o) => &o.metadata,
            Object::VolumeAttachment(o) => &o.metadata,
            Object::PersistentVolumeClaim(o) => &o.metadata,
            Object::PersistentVolume(o) => &o.metadata,
            Object::Job(o) => &o.metadata,
            Object::CronJob(o) => &o.metadata,
            Object::StatefulSet(o) => &o.metadata,
            Object::ReplicaSet(o) => &o.metadata,
            Object::Deployment(o) => &o.metadata,
            Object::EndpointSlice(o) => &o.metadata,
            Object::Namespace(o) => &o.metadata,
            Object::ConfigMap(m) | Object::Endpoints(m) => m.as_ref(),
        }
    }

    /// Namespace (empty for cluster-scoped kinds) and name.
    pub fn key(&self) -> ObjectKey {
        let meta = self.meta();
        let namespace = if self.kind().namespaced() {
            meta.namespace.clone().unwrap_or_default()
        } else {
            String::new()
        };
        ObjectKey {
            namespace,
            name: meta.name.clone().unwrap_or_default(),
        }
    }

    /// Decode one object of `kind` from JSON (as read from a file), slimmed.
    /// `apiVersion`/`kind` are dropped first so other served versions of the
    /// same kind (e.g. `batch/v1beta1` CronJobs) decode too.
    pub fn from_value(
        kind: Kind,
        mut value: serde_json::Value,
    ) -> Result<Object, serde_json::Error> {
        if let Some(map) = value.as_object_mut() {
            map.remove("apiVersion");
            map.remove("kind");
            if let Some(meta) = map.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                // Dropped before decoding: often the largest part of an object.
                meta.remove("managedFields");
            }
        }
        fn decode<T: serde::de::DeserializeOwned>(
            value: serde_json::Value,
        ) -> Result<T, serde_json::Error> {
            serde_json::from_value(value)
        }
        let object = match kind {
            Kind::Pod => Object::Pod(Arc::new(slim::pod(decode(value)?))),
            Kind::Node => Object::Node(Arc::new(slim::node(decode(value)?))),
            Kind::Lease => Object::Lease(Arc::new(slim::with_meta(decode::<Lease>(value)?))),
            Kind::VolumeAttachment => Object::VolumeAttachment(Arc::new(slim::with_meta(
                decode::<VolumeAttachment>(value)?,
            ))),
            Kind::PersistentVolumeClaim => {
                Object::PersistentVolumeClaim(Arc::new(slim::with_meta(decode::<
                    PersistentVolumeClaim,
                >(value)?)))
            }
            Kind::PersistentVolume => Object::PersistentVolume(Arc::new(slim::with_meta(
                decode::<PersistentVolume>(value)?,
            ))),
            Kind::Job => Object::Job(Arc::new(slim::job(decode(value)?))),
            Kind::CronJob => Object::CronJob(Arc::new(slim::cron_job(decode(value)?))),
            Kind::StatefulSet => Object::StatefulSet(Arc::new(slim::stateful_set(decode(value)?))),
            Kind::ReplicaSet => Object::ReplicaSet(Arc::new(slim::replica_set(decode(value)?))),
            Kind::Deployment => Object::Deployment(Arc::new(slim::deployment(decode(value)?))),
            Kind::EndpointSlice => {
                Object::EndpointSlice(Arc::new(slim::with_meta(decode::<EndpointSlice>(value)?)))
            }
            Kind::Namespace => {
                Object::Namespace(Arc::new(slim::with_meta(decode::<Namespace>(value)?)))
            }
            Kind::ConfigMap => {
                Object::ConfigMap(Arc::new(slim::metadata_only(metadata_of(value)?)))
            }
            Kind::Endpoints => {
                Object::Endpoints(Arc::new(slim::metadata_only(metadata_of(value)?)))
            }
        };
        Ok(object)
    }

    /// Drop everything no fact reads (see [`slim`]), for objects built in
    /// memory (synthetic clusters, watch events). Decoding with
    /// [`Object::from_value`] already slims.
    pub fn slim(self) -> Object {
        fn map<T: Clone>(object: Arc<T>, f: impl FnOnce(T) -> T) -> Arc<T> {
            Arc::new(f(Arc::unwrap_or_clone(object)))
        }
        match self {
            Object::Pod(o) => Object::Pod(map(o, slim::pod)),
            Object::Node(o) => Object::Node(map(o, slim::node)),
            Object::Lease(o) => Object::Lease(map(o, slim::with_meta)),
            Object::VolumeAttachment(o) => Object::VolumeAttachment(map(o, slim::with_meta)),
            Object::PersistentVolumeClaim(o) => {
                Object::PersistentVolumeClaim(map(o, slim::with_meta))
            }
            Object::PersistentVolume(o) => Object::PersistentVolume(map(o, slim::with_meta)),
            Object::Job(o) => Object::Job(map(o, slim::job)),
            Object::CronJob(o) => Object::CronJob(map(o, slim::cron_job)),
            Object::StatefulSet(o) => Object::StatefulSet(map(o, slim::stateful_set)),
            Object::ReplicaSet(o) => Object::ReplicaSet(map(o, slim::replica_set)),
            Object::Deployment(o) => Object::Deployment(map(o, slim::deployment)),
            Object::EndpointSlice(o) => Object::EndpointSlice(map(o, slim::with_meta)),
            Object::Namespace(o) => Object::Namespace(map(o, slim::with_meta)),
            Object::ConfigMap(m) => Object::ConfigMap(map(m, slim::metadata_only)),
            Object::Endpoints(m) => Object::Endpoints(map(m, slim::metadata_only)),
        }
    }
}

/// A typed object that can enter the index; the conversion slims it.
pub trait IntoObject {
    fn into_object(self) -> Object;
}

macro_rules! into_object {
    ($($ty:ident => $slim:path,)*) => {$(
        impl IntoObject for $ty {
            fn into_object(self) -> Object {
                Object::$ty(Arc::new($slim(self)))
            }
        }
    )*};
}

into_object! {
    Pod => slim::pod,
    Node => slim::node,
    Lease => slim::with_meta,
    VolumeAttachment => slim::with_meta,
    PersistentVolumeClaim => slim::with_meta,
    PersistentVolume => slim::with_meta,
    Job => slim::job,
    CronJob => slim::cron_job,
    StatefulSet => slim::stateful_set,
    ReplicaSet => slim::replica_set,
    Deployment => slim::deployment,
    EndpointSlice => slim::with_meta,
    Namespace => slim::with_meta,
}

/// Only `metadata` of a metadata-only kind is decoded; `data` is never read.
fn metadata_of(mut value: serde_json::Value) -> Result<ObjectMeta, serde_json::Error> {
    let meta = value
        .as_object_mut()
        .and_then(|m| m.remove("metadata"))
        .unwrap_or(serde_json::Value::Null);
    if meta.is_null() {
        return Ok(ObjectMeta::default());
    }
    serde_json::from_value(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_other_versions_and_strips_managed_fields() {
        let value = json!({
            "apiVersion": "batch/v1beta1",
            "kind": "CronJob",
            "metadata": {
                "name": "nightly", "namespace": "ops",
                "managedFields": [{"manager": "kubectl"}],
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{}",
                    "team": "ops"
                }
            },
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}}
        });
        let object = Object::from_value(Kind::CronJob, value).expect("decodes");
        let meta = object.meta();
        assert_eq!(object.key(), ObjectKey::new("ops", "nightly"));
        assert!(meta.managed_fields.is_none());
        let annotations = meta.annotations.clone().unwrap_or_default();
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations.get("team").map(String::as_str), Some("ops"));
        let Object::CronJob(cron) = object else {
            panic!("wrong kind")
        };
        let spec = &cron.spec;
        assert_eq!(spec.schedule, "0 3 * * *");
        assert!(spec.job_template.spec.is_none(), "pod template dropped");
    }

    #[test]
    fn cluster_scoped_keys_ignore_a_stray_namespace() {
        let value = json!({"metadata": {"name": "pv-1", "namespace": "oops"}});
        let object = Object::from_value(Kind::PersistentVolume, value).expect("decodes");
        assert_eq!(object.key(), ObjectKey::cluster("pv-1"));
    }

    #[test]
    fn rejects_ill_typed_objects() {
        let value = json!({"metadata": {"name": "p"}, "spec": {"containers": "nope"}});
        assert!(Object::from_value(Kind::Pod, value).is_err());
    }
}
