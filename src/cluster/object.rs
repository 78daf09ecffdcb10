//! One typed, slimmed object of a known kind: the unit both sources feed
//! into the [`Index`](super::index::Index).

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

/// A known object, already slimmed (see [`slim`]). ConfigMaps and Endpoints
/// are metadata-only: facts only read their leader annotation.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    Pod(Pod),
    Node(Node),
    Lease(Lease),
    VolumeAttachment(VolumeAttachment),
    PersistentVolumeClaim(PersistentVolumeClaim),
    PersistentVolume(PersistentVolume),
    Job(Job),
    CronJob(CronJob),
    StatefulSet(StatefulSet),
    ReplicaSet(ReplicaSet),
    Deployment(Deployment),
    EndpointSlice(EndpointSlice),
    Namespace(Namespace),
    ConfigMap(ObjectMeta),
    Endpoints(ObjectMeta),
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
            Object::ConfigMap(m) | Object::Endpoints(m) => m,
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
        let object = match kind {
            Kind::Pod => Object::Pod(serde_json::from_value(value)?),
            Kind::Node => Object::Node(serde_json::from_value(value)?),
            Kind::Lease => Object::Lease(serde_json::from_value(value)?),
            Kind::VolumeAttachment => Object::VolumeAttachment(serde_json::from_value(value)?),
            Kind::PersistentVolumeClaim => {
                Object::PersistentVolumeClaim(serde_json::from_value(value)?)
            }
            Kind::PersistentVolume => Object::PersistentVolume(serde_json::from_value(value)?),
            Kind::Job => Object::Job(serde_json::from_value(value)?),
            Kind::CronJob => Object::CronJob(serde_json::from_value(value)?),
            Kind::StatefulSet => Object::StatefulSet(serde_json::from_value(value)?),
            Kind::ReplicaSet => Object::ReplicaSet(serde_json::from_value(value)?),
            Kind::Deployment => Object::Deployment(serde_json::from_value(value)?),
            Kind::EndpointSlice => Object::EndpointSlice(serde_json::from_value(value)?),
            Kind::Namespace => Object::Namespace(serde_json::from_value(value)?),
            Kind::ConfigMap => Object::ConfigMap(metadata_of(value)?),
            Kind::Endpoints => Object::Endpoints(metadata_of(value)?),
        };
        Ok(object.slim())
    }

    /// Drop everything no fact reads (see [`slim`]).
    pub fn slim(self) -> Object {
        match self {
            Object::Pod(o) => Object::Pod(slim::pod(o)),
            Object::Node(o) => Object::Node(slim::node(o)),
            Object::Lease(mut o) => {
                slim::meta(&mut o.metadata);
                Object::Lease(o)
            }
            Object::VolumeAttachment(mut o) => {
                slim::meta(&mut o.metadata);
                Object::VolumeAttachment(o)
            }
            Object::PersistentVolumeClaim(mut o) => {
                slim::meta(&mut o.metadata);
                Object::PersistentVolumeClaim(o)
            }
            Object::PersistentVolume(mut o) => {
                slim::meta(&mut o.metadata);
                Object::PersistentVolume(o)
            }
            Object::Job(o) => Object::Job(slim::job(o)),
            Object::CronJob(o) => Object::CronJob(slim::cron_job(o)),
            Object::StatefulSet(o) => Object::StatefulSet(slim::stateful_set(o)),
            Object::ReplicaSet(o) => Object::ReplicaSet(slim::replica_set(o)),
            Object::Deployment(o) => Object::Deployment(slim::deployment(o)),
            Object::EndpointSlice(mut o) => {
                slim::meta(&mut o.metadata);
                Object::EndpointSlice(o)
            }
            Object::Namespace(mut o) => {
                slim::meta(&mut o.metadata);
                Object::Namespace(o)
            }
            Object::ConfigMap(m) => Object::ConfigMap(slim::metadata_only(m)),
            Object::Endpoints(m) => Object::Endpoints(slim::metadata_only(m)),
        }
    }
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
        let spec = cron.spec;
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
