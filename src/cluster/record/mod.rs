//! Compact records: what the index stores for each cached object.
//!
//! k8s-openapi structs are large inline even when their fields are `None`
//! (a `Pod` is ~2.4 KiB, a `VolumeAttachment` ~3.6 KiB before any string),
//! so a cache of them costs most of its memory in empty space. A record
//! holds exactly the fields facts, the cleanup checklist and the index
//! read, converted once on the way in (`From<k8s type>`, consuming, so
//! strings move instead of being copied).
//!
//! Adding a field a fact needs means adding it here and to its `From`.

mod coordination;
mod network;
mod pod;
mod storage;
mod workloads;

pub use self::coordination::{LEGACY_LEADER, Lease, MetadataOnly};
pub use self::network::{Endpoint, EndpointSlice, TargetRef};
pub use self::pod::Pod;
pub use self::storage::{PersistentVolume, PersistentVolumeClaim, VolumeAttachment};
pub use self::workloads::{CronJob, Deployment, Job, ReplicaSet, StatefulSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kube::core::DynamicObject;

use super::kind::for_each_kind;

/// Identity every record carries (`metadata.namespace`, `name`, `uid`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Empty when absent (cluster-scoped kinds).
    pub namespace: String,
    /// Empty when absent.
    pub name: String,
    pub uid: Option<String>,
}

impl From<ObjectMeta> for Meta {
    fn from(meta: ObjectMeta) -> Self {
        Meta {
            namespace: meta.namespace.unwrap_or_default(),
            name: meta.name.unwrap_or_default(),
            uid: meta.uid,
        }
    }
}

impl From<&ObjectMeta> for Meta {
    fn from(meta: &ObjectMeta) -> Self {
        Meta {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone(),
        }
    }
}

/// Every record: its identity, for code that handles any kind.
pub trait Record {
    fn meta(&self) -> &Meta;
}

macro_rules! records {
    (
        typed: [$($typed:ident $typed_group:literal $typed_resource:literal,)*],
        metadata_only: [$($meta:ident $meta_group:literal $meta_resource:literal,)*],
    ) => {$(
        impl Record for $typed {
            fn meta(&self) -> &Meta {
                &self.meta
            }
        }
    )*};
}

for_each_kind!(records);

impl Record for MetadataOnly {
    fn meta(&self) -> &Meta {
        &self.meta
    }
}

/// The owner reference that manages an object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnerRef {
    pub kind: String,
    pub name: String,
    /// Empty when the reference has none.
    pub uid: String,
}

/// The managing controller (`controller: true`), else the first owner: the
/// only owner reference facts follow.
fn controller_of(owners: Option<&[OwnerReference]>) -> Option<OwnerRef> {
    let owners = owners?;
    let owner = owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or(owners.first())?;
    Some(OwnerRef {
        kind: owner.kind.clone(),
        name: owner.name.clone(),
        uid: owner.uid.clone(),
    })
}

/// Node: its taints and Ready condition decide alive, unreachable, fenced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    pub meta: Meta,
    /// Keys of `spec.taints`, in order.
    pub taints: Vec<String>,
    /// The first `Ready` condition.
    pub ready: Option<ReadyCondition>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadyCondition {
    /// As written: `True`, `False`, `Unknown`.
    pub status: String,
    pub last_heartbeat: Option<Timestamp>,
}

impl From<k8s_openapi::api::core::v1::Node> for Node {
    fn from(node: k8s_openapi::api::core::v1::Node) -> Self {
        let taints = node
            .spec
            .and_then(|s| s.taints)
            .into_iter()
            .flatten()
            .map(|t| t.key)
            .collect();
        let ready = node
            .status
            .and_then(|s| s.conditions)
            .into_iter()
            .flatten()
            .find(|c| c.type_ == "Ready")
            .map(|c| ReadyCondition {
                status: c.status,
                last_heartbeat: c.last_heartbeat_time.map(|t| t.0),
            });
        Node {
            meta: node.metadata.into(),
            taints,
            ready,
        }
    }
}

/// Namespace: whether it exists and its phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespace {
    pub meta: Meta,
    pub phase: Option<String>,
}

impl From<k8s_openapi::api::core::v1::Namespace> for Namespace {
    fn from(namespace: k8s_openapi::api::core::v1::Namespace) -> Self {
        Namespace {
            meta: namespace.metadata.into(),
            phase: namespace.status.and_then(|s| s.phase),
        }
    }
}

impl Namespace {
    /// A namespace as an admission request carries it.
    pub fn from_dynamic(object: &DynamicObject) -> Result<Namespace, serde_json::Error> {
        let typed: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(serde_json::to_value(object)?)?;
        Ok(Namespace::from(typed))
    }
}

#[cfg(test)]
mod tests;
