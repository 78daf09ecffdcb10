//! A one-shot [`SnapshotCluster`] from the API: each kind the facts read,
//! listed once into the same index the webhook's watch caches fill. A kind
//! whose list is refused stays absent, so facts from it are Unknown (and
//! the policy's `onUnknown` decides), as with a snapshot that lacks it.

use std::fmt::Debug;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Resource;
use kube::api::Api;
use serde::de::DeserializeOwned;

use super::{Cluster, list_all, list_metadata_all, refused};
use crate::cluster::{Kind, Object, SnapshotCluster};
use crate::oncall::OncallError;
use crate::oncall::inventory::Gap;

type Listed = BoxFuture<'static, Result<Vec<Object>, kube::Error>>;

/// Namespaced kind `K` in `namespace`, or in every namespace.
fn in_scope<K>(cluster: &Cluster, namespace: Option<&str>) -> Api<K>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
{
    match namespace {
        Some(ns) => Api::namespaced(cluster.client.clone(), ns),
        None => Api::all(cluster.client.clone()),
    }
}

/// Every object of `api`, as records.
fn full<K>(api: Api<K>) -> Listed
where
    K: Resource<DynamicType = ()>
        + Into<Object>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + 'static,
{
    async move { Ok(list_all(&api).await?.into_iter().map(Into::into).collect()) }.boxed()
}

/// ConfigMaps and Endpoints: metadata only (legacy leader records, counts).
fn metadata<K>(cluster: &Cluster, namespace: Option<&str>, kind: Kind) -> Listed
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + 'static,
{
    let api: Api<K> = in_scope(cluster, namespace);
    async move {
        let listed = list_metadata_all(&api).await?;
        Ok(listed
            .into_iter()
            .map(|o| Object::metadata_only(kind, o.metadata))
            .collect())
    }
    .boxed()
}

/// List every kind the facts read, namespaced kinds in `namespace` only
/// (or everywhere), cluster-scoped kinds whole. Refused lists are gaps.
pub async fn cluster_view(
    cluster: &Cluster,
    namespace: Option<&str>,
) -> Result<(SnapshotCluster, Vec<Gap>), OncallError> {
    let lists: Vec<(Kind, Listed)> = vec![
        (Kind::Pod, full(in_scope::<Pod>(cluster, namespace))),
        (Kind::Node, full(Api::<Node>::all(cluster.client.clone()))),
        (Kind::Lease, full(in_scope::<Lease>(cluster, namespace))),
        (
            Kind::VolumeAttachment,
            full(Api::<VolumeAttachment>::all(cluster.client.clone())),
        ),
        (
            Kind::PersistentVolumeClaim,
            full(in_scope::<PersistentVolumeClaim>(cluster, namespace)),
        ),
        (
            Kind::PersistentVolume,
            full(Api::<PersistentVolume>::all(cluster.client.clone())),
        ),
        (Kind::Job, full(in_scope::<Job>(cluster, namespace))),
        (Kind::CronJob, full(in_scope::<CronJob>(cluster, namespace))),
        (
            Kind::StatefulSet,
            full(in_scope::<StatefulSet>(cluster, namespace)),
        ),
        (
            Kind::ReplicaSet,
            full(in_scope::<ReplicaSet>(cluster, namespace)),
        ),
        (
            Kind::Deployment,
            full(in_scope::<Deployment>(cluster, namespace)),
        ),
        (
            Kind::EndpointSlice,
            full(in_scope::<EndpointSlice>(cluster, namespace)),
        ),
        (
            Kind::Namespace,
            full(Api::<Namespace>::all(cluster.client.clone())),
        ),
        (
            Kind::ConfigMap,
            metadata::<ConfigMap>(cluster, namespace, Kind::ConfigMap),
        ),
        (
            Kind::Endpoints,
            metadata::<Endpoints>(cluster, namespace, Kind::Endpoints),
        ),
    ];
    let (kinds, futures): (Vec<Kind>, Vec<Listed>) = lists.into_iter().unzip();
    let results = futures::future::join_all(futures).await;
    let (mut objects, mut declared, mut gaps) = (Vec::new(), Vec::new(), Vec::new());
    for (kind, result) in kinds.into_iter().zip(results) {
        match result {
            Ok(listed) => {
                objects.extend(listed);
                declared.push(kind);
            }
            Err(err) => match refused(&err) {
                Some(reason) => gaps.push(Gap {
                    what: kind.name().to_owned(),
                    reason,
                }),
                None => return Err(cluster.error(&format!("listing {}", kind.resource()), err)),
            },
        }
    }
    Ok((SnapshotCluster::from_objects(objects, declared), gaps))
}
