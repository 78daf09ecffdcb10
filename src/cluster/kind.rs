//! The kinds the cluster view knows, and how to recognise them in files and
//! watch streams.
//!
//! A closed enum (rather than strings) keeps per-kind state in arrays and
//! makes "which kinds does this fact depend on" checkable by the compiler.

use std::fmt;

/// Every kind a [`ClusterView`](super::ClusterView) indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Pod,
    Node,
    Lease,
    VolumeAttachment,
    PersistentVolumeClaim,
    PersistentVolume,
    Job,
    CronJob,
    StatefulSet,
    ReplicaSet,
    Deployment,
    EndpointSlice,
    Namespace,
    /// Metadata only: legacy leader annotations and namespace counts.
    ConfigMap,
    /// Metadata only: legacy leader annotations and namespace counts.
    Endpoints,
}

impl Kind {
    pub const ALL: [Kind; 15] = [
        Kind::Pod,
        Kind::Node,
        Kind::Lease,
        Kind::VolumeAttachment,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::Job,
        Kind::CronJob,
        Kind::StatefulSet,
        Kind::ReplicaSet,
        Kind::Deployment,
        Kind::EndpointSlice,
        Kind::Namespace,
        Kind::ConfigMap,
        Kind::Endpoints,
    ];

    /// Dense index for per-kind arrays.
    pub fn ordinal(self) -> usize {
        self as usize
    }

    /// The Kubernetes `kind`, e.g. `PersistentVolumeClaim`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pod => "Pod",
            Kind::Node => "Node",
            Kind::Lease => "Lease",
            Kind::VolumeAttachment => "VolumeAttachment",
            Kind::PersistentVolumeClaim => "PersistentVolumeClaim",
            Kind::PersistentVolume => "PersistentVolume",
            Kind::Job => "Job",
            Kind::CronJob => "CronJob",
            Kind::StatefulSet => "StatefulSet",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::Deployment => "Deployment",
            Kind::EndpointSlice => "EndpointSlice",
            Kind::Namespace => "Namespace",
            Kind::ConfigMap => "ConfigMap",
            Kind::Endpoints => "Endpoints",
        }
    }

    /// API group (`""` for core).
    pub fn group(self) -> &'static str {
        match self {
            Kind::Pod
            | Kind::Node
            | Kind::PersistentVolumeClaim
            | Kind::PersistentVolume
            | Kind::Namespace
            | Kind::ConfigMap
            | Kind::Endpoints => "",
            Kind::Lease => "coordination.k8s.io",
            Kind::VolumeAttachment => "storage.k8s.io",
            Kind::Job | Kind::CronJob => "batch",
            Kind::StatefulSet | Kind::ReplicaSet | Kind::Deployment => "apps",
            Kind::EndpointSlice => "discovery.k8s.io",
        }
    }

    /// Plural resource name, as RBAC rules and URLs spell it.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::Pod => "pods",
            Kind::Node => "nodes",
            Kind::Lease => "leases",
            Kind::VolumeAttachment => "volumeattachments",
            Kind::PersistentVolumeClaim => "persistentvolumeclaims",
            Kind::PersistentVolume => "persistentvolumes",
            Kind::Job => "jobs",
            Kind::CronJob => "cronjobs",
            Kind::StatefulSet => "statefulsets",
            Kind::ReplicaSet => "replicasets",
            Kind::Deployment => "deployments",
            Kind::EndpointSlice => "endpointslices",
            Kind::Namespace => "namespaces",
            Kind::ConfigMap => "configmaps",
            Kind::Endpoints => "endpoints",
        }
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

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_kinds_by_group_not_version() {
        assert_eq!(Kind::from_api("v1", "Pod"), Some(Kind::Pod));
        assert_eq!(
            Kind::from_api("batch/v1beta1", "CronJob"),
            Some(Kind::CronJob)
        );
        assert_eq!(Kind::from_api("apps/v1", "Pod"), None);
        assert_eq!(Kind::from_api("v1", "Service"), None);
        assert_eq!(
            Kind::from_api("discovery.k8s.io/v1", "EndpointSlice"),
            Some(Kind::EndpointSlice)
        );
    }

    #[test]
    fn typed_lists_name_their_item_kind() {
        assert_eq!(
            Kind::from_list_kind("storage.k8s.io/v1", "VolumeAttachmentList"),
            Some(Kind::VolumeAttachment)
        );
        assert_eq!(Kind::from_list_kind("v1", "List"), None);
        assert_eq!(Kind::from_list_kind("v1", "ServiceList"), None);
    }

    #[test]
    fn ordinals_are_dense() {
        for (i, kind) in Kind::ALL.iter().enumerate() {
            assert_eq!(kind.ordinal(), i);
        }
    }
}
