//! The kinds the cluster view knows, and how to recognise them in files and
//! watch streams.
//!
//! A closed enum (rather than strings) keeps per-kind state in arrays and
//! makes "which kinds does this fact depend on" checkable by the compiler.

use std::fmt;

/// The one list of kinds the cluster view indexes, handed to the macro
/// `$then`: each kind's name (the Kubernetes kind, and its variant of
/// [`Kind`] and of [`Object`](super::Object)), API group and plural
/// resource. A `typed` kind is decoded as its k8s-openapi type into the
/// record of the same name; a `metadata_only` kind keeps its metadata in a
/// [`MetadataOnly`](super::record::MetadataOnly) record (legacy leader
/// annotations and namespace counts).
macro_rules! for_each_kind {
    ($then:ident) => {
        $then! {
            typed: [
                Pod "" "pods",
                Node "" "nodes",
                Lease "coordination.k8s.io" "leases",
                VolumeAttachment "storage.k8s.io" "volumeattachments",
                PersistentVolumeClaim "" "persistentvolumeclaims",
                PersistentVolume "" "persistentvolumes",
                Job "batch" "jobs",
                CronJob "batch" "cronjobs",
                StatefulSet "apps" "statefulsets",
                ReplicaSet "apps" "replicasets",
                Deployment "apps" "deployments",
                EndpointSlice "discovery.k8s.io" "endpointslices",
                Namespace "" "namespaces",
            ],
            metadata_only: [
                ConfigMap "" "configmaps",
                Endpoints "" "endpoints",
            ],
        }
    };
}
pub(crate) use for_each_kind;

macro_rules! define_kind {
    (
        typed: [$($typed:ident $typed_group:literal $typed_resource:literal,)*],
        metadata_only: [$($meta:ident $meta_group:literal $meta_resource:literal,)*],
    ) => {
        /// Every kind a [`ClusterView`](super::ClusterView) indexes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($typed,)*
            $($meta,)*
        }

        impl Kind {
            pub const ALL: [Kind; [$(Kind::$typed,)* $(Kind::$meta,)*].len()] =
                [$(Kind::$typed,)* $(Kind::$meta,)*];

            /// The Kubernetes `kind`, e.g. `PersistentVolumeClaim`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$typed => stringify!($typed),)*
                    $(Kind::$meta => stringify!($meta),)*
                }
            }

            /// API group (`""` for core).
            pub fn group(self) -> &'static str {
                match self {
                    $(Kind::$typed => $typed_group,)*
                    $(Kind::$meta => $meta_group,)*
                }
            }

            /// Plural resource name, as RBAC rules and URLs spell it.
            pub fn resource(self) -> &'static str {
                match self {
                    $(Kind::$typed => $typed_resource,)*
                    $(Kind::$meta => $meta_resource,)*
                }
            }
        }
    };
}

for_each_kind!(define_kind);

impl Kind {
    /// Dense index for per-kind arrays.
    pub fn ordinal(self) -> usize {
        self as usize
    }

    /// Cluster-scoped kinds have no namespace and are not counted per namespace.
    pub fn namespaced(self) -> bool {
        !matches!(
            self,
            Kind::Node | Kind::VolumeAttachment | Kind::PersistentVolume | Kind::Namespace
        )
    }

    /// Recognise an object by `apiVersion` and `kind`. The version is ignored
    /// on purpose: the fields facts read are stable across served versions.
    pub fn from_api(api_version: &str, kind: &str) -> Option<Kind> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == kind && k.group() == group)
    }

    /// `PodList` → `Pod` (the typed list kind the API server and kubectl
    /// write); plain `List` is not a typed list.
    pub fn from_list_kind(api_version: &str, list_kind: &str) -> Option<Kind> {
        let item = list_kind.strip_suffix("List").filter(|k| !k.is_empty())?;
        Kind::from_api(api_version, item)
    }
}

impl Kind {
    /// The kinds fact group `group` (as the policy catalog names it) is
    /// gathered from: what forcegate must be able to list and watch for
    /// those facts to be known. `finalizers` come from the request alone.
    pub fn for_fact_group(group: &str) -> Vec<Kind> {
        use Kind::*;
        match group {
            // The view's UID for any target kind the identity check knows.
            "identity" => vec![
                Pod,
                PersistentVolumeClaim,
                PersistentVolume,
                Namespace,
                Deployment,
                ReplicaSet,
                StatefulSet,
                Job,
                CronJob,
            ],
            "pod" => vec![Pod],
            "node" => vec![Node],
            "owners" => vec![ReplicaSet, Deployment, StatefulSet, Job, CronJob],
            "leader" => vec![Lease, ConfigMap, Endpoints],
            "volumes" => vec![PersistentVolumeClaim, PersistentVolume, VolumeAttachment],
            "endpoints" => vec![EndpointSlice],
            "claim" => vec![PersistentVolumeClaim, Pod],
            "persistentVolume" => vec![PersistentVolume, VolumeAttachment],
            // Labels of the namespace, and counts of what it still holds.
            "namespace" => std::iter::once(Namespace)
                .chain(Kind::ALL.into_iter().filter(|k| k.namespaced()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `resource.group` (`pods`, `volumeattachments.storage.k8s.io`), as
    /// RBAC and `kubectl auth can-i` name it.
    pub fn qualified_resource(self) -> String {
        if self.group().is_empty() {
            self.resource().to_owned()
        } else {
            format!("{}.{}", self.resource(), self.group())
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests;
