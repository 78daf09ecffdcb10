//! One object of a known kind, as a compact record: the unit both sources
//! feed into the [`Index`](super::index::Index).

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::kind::{Kind, for_each_kind};
use super::record::{self, Meta};

/// Where an object lives: namespace (empty for cluster-scoped kinds) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectKey {
    pub namespace: String,
    pub name: String,
}

/// A key's namespace and name, however held: maps keyed by [`ObjectKey`]
/// are looked up with borrowed `(&str, &str)` pairs, since every decision
/// makes a dozen lookups and owned keys copied both strings for each.
pub trait KeyParts {
    fn parts(&self) -> (&str, &str);
}

impl KeyParts for ObjectKey {
    fn parts(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }
}

impl KeyParts for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

/// The key `(namespace, name)` as a map of [`ObjectKey`]s looks it up.
pub fn key<'a>(parts: &'a (&'a str, &'a str)) -> &'a (dyn KeyParts + 'a) {
    parts
}

// One hash and equality for owned and borrowed keys, as `Borrow` requires.
impl Hash for dyn KeyParts + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (namespace, name) = self.parts();
        namespace.hash(state);
        name.hash(state);
    }
}

impl PartialEq for dyn KeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn KeyParts + '_ {}

impl Hash for ObjectKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self as &dyn KeyParts).hash(state);
    }
}

impl<'a> Borrow<dyn KeyParts + 'a> for ObjectKey {
    fn borrow(&self) -> &(dyn KeyParts + 'a) {
        self
    }
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

macro_rules! define_object {
    (
        typed: [$($typed:ident $typed_group:literal $typed_resource:literal,)*],
        metadata_only: [$($meta:ident $meta_group:literal $meta_resource:literal,)*],
    ) => {
        /// A known object, as the index stores it: a compact [`record`]
        /// behind an `Arc`, so batches move as pointers and lookups hand out
        /// shared copies. One variant per [`Kind`].
        #[derive(Clone, Debug, PartialEq)]
        pub enum Object {
            $($typed(Arc<record::$typed>),)*
            $($meta(Arc<record::MetadataOnly>),)*
        }

        impl Object {
            pub fn kind(&self) -> Kind {
                match self {
                    $(Object::$typed(_) => Kind::$typed,)*
                    $(Object::$meta(_) => Kind::$meta,)*
                }
            }

            pub fn meta(&self) -> &Meta {
                match self {
                    $(Object::$typed(o) => &o.meta,)*
                    $(Object::$meta(o) => &o.meta,)*
                }
            }

            /// Decode `value` as the k8s-openapi type of `kind`, or only its
            /// metadata for a metadata-only kind.
            fn decode(kind: Kind, value: serde_json::Value) -> Result<Object, serde_json::Error> {
                match kind {
                    $(Kind::$typed => serde_json::from_value::<$typed>(value).map(Into::into),)*
                    $(Kind::$meta => Ok(Object::$meta(Arc::new(metadata_of(value)?.into()))),)*
                }
            }
        }

        $(
            impl From<$typed> for Object {
                fn from(object: $typed) -> Object {
                    Object::$typed(Arc::new(object.into()))
                }
            }
        )*
    };
}

for_each_kind!(define_object);

impl Object {
    /// Namespace (empty for cluster-scoped kinds) and name.
    pub fn key(&self) -> ObjectKey {
        let meta = self.meta();
        let namespace = if self.kind().namespaced() {
            meta.namespace.clone()
        } else {
            String::new()
        };
        ObjectKey {
            namespace,
            name: meta.name.clone(),
        }
    }

    /// Decode one object of `kind` from JSON (as read from a file): the
    /// typed k8s-openapi object first, so ill-typed input is rejected as the
    /// API would, then its record. `apiVersion`/`kind` are dropped first so
    /// other served versions of the same kind (e.g. `batch/v1beta1`
    /// CronJobs) decode too.
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
        Object::decode(kind, value)
    }

    /// A ConfigMap or Endpoints known by its metadata alone.
    pub fn metadata_only(kind: Kind, meta: ObjectMeta) -> Object {
        let record = Arc::new(record::MetadataOnly::from(meta));
        match kind {
            Kind::ConfigMap => Object::ConfigMap(record),
            _ => Object::Endpoints(record),
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
mod tests;
