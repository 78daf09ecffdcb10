//! [`WatchClient`]s over `kube::Api`: full objects for kinds whose spec or
//! status facts read, metadata-only (`PartialObjectMeta`) where identity and
//! ownership are enough — less traffic, less memory. Every item becomes its
//! compact record as soon as it is decoded.

use std::fmt::Debug;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::core::PartialObjectMeta;
use serde::de::DeserializeOwned;

use super::watch::{CallError, Change, Changes, Page, WatchClient};
use crate::cluster::kind::Kind;
use crate::cluster::object::Object;

/// Watches full objects of `K`.
struct Full<K> {
    kind: Kind,
    api: Api<K>,
}

/// Watches only the metadata of `K`; `convert` builds the record.
struct MetadataOnly<K> {
    kind: Kind,
    api: Api<K>,
    convert: fn(ObjectMeta) -> Object,
}

/// The object's resourceVersion, read before it becomes a record (records
/// do not keep it).
fn version_of<T: kube::Resource>(object: &T) -> String {
    object.meta().resource_version.clone().unwrap_or_default()
}

fn change<T: kube::Resource>(event: WatchEvent<T>, into: impl Fn(T) -> Object) -> Change {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
            let version = version_of(&o);
            Change::Upsert(into(o), version)
        }
        WatchEvent::Deleted(o) => {
            let version = version_of(&o);
            Change::Delete(into(o), version)
        }
        WatchEvent::Bookmark(b) => Change::Bookmark(b.metadata.resource_version),
        WatchEvent::Error(status) => Change::Failure {
            code: status.code,
            message: status.message,
        },
    }
}

impl<K> WatchClient for Full<K>
where
    K: kube::Resource<DynamicType = ()>
        + Into<Object>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    fn kind(&self) -> Kind {
        self.kind
    }

    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<Page, CallError>> {
        let api = self.api.clone();
        async move {
            let list = api.list(&params).await?;
            Ok(Page {
                objects: list.items.into_iter().map(K::into).collect(),
                resource_version: list.metadata.resource_version,
                continue_token: list.metadata.continue_,
            })
        }
        .boxed()
    }

    fn watch(
        &self,
        params: WatchParams,
        version: String,
    ) -> BoxFuture<'static, Result<Changes, CallError>> {
        let api = self.api.clone();
        async move {
            let stream = api.watch(&params, &version).await?;
            let changes: Changes = stream
                .map_ok(|event| change(event, K::into))
                .map_err(CallError::from)
                .boxed();
            Ok(changes)
        }
        .boxed()
    }
}

impl<K> WatchClient for MetadataOnly<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    fn kind(&self) -> Kind {
        self.kind
    }

    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<Page, CallError>> {
        let api = self.api.clone();
        let convert = self.convert;
        async move {
            let list = api.list_metadata(&params).await?;
            Ok(Page {
                objects: list
                    .items
                    .into_iter()
                    .map(|o| convert(o.metadata))
                    .collect(),
                resource_version: list.metadata.resource_version,
                continue_token: list.metadata.continue_,
            })
        }
        .boxed()
    }

    fn watch(
        &self,
        params: WatchParams,
        version: String,
    ) -> BoxFuture<'static, Result<Changes, CallError>> {
        let api = self.api.clone();
        let convert = self.convert;
        async move {
            let stream = api.watch_metadata(&params, &version).await?;
            let changes: Changes = stream
                .map_ok(move |event| change(event, |o: PartialObjectMeta<K>| convert(o.metadata)))
                .map_err(CallError::from)
                .boxed();
            Ok(changes)
        }
        .boxed()
    }
}

fn full<K>(client: &kube::Client, kind: Kind) -> Box<dyn WatchClient>
where
    K: kube::Resource<DynamicType = ()>
        + Into<Object>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    Box::new(Full {
        kind,
        api: Api::<K>::all(client.clone()),
    })
}

fn metadata_only<K>(
    client: &kube::Client,
    kind: Kind,
    convert: fn(ObjectMeta) -> Object,
) -> Box<dyn WatchClient>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    Box::new(MetadataOnly {
        kind,
        api: Api::<K>::all(client.clone()),
        convert,
    })
}

/// One client per watched kind. ReplicaSets, Deployments and StatefulSets
/// are metadata-only: facts read only their names and ownerReferences.
pub fn clients(client: &kube::Client, legacy_leaders: bool) -> Vec<Box<dyn WatchClient>> {
    let mut clients = vec![
        full::<Pod>(client, Kind::Pod),
        full::<Node>(client, Kind::Node),
        full::<Lease>(client, Kind::Lease),
        full::<VolumeAttachment>(client, Kind::VolumeAttachment),
        full::<PersistentVolumeClaim>(client, Kind::PersistentVolumeClaim),
        full::<PersistentVolume>(client, Kind::PersistentVolume),
        full::<Job>(client, Kind::Job),
        full::<CronJob>(client, Kind::CronJob),
        full::<EndpointSlice>(client, Kind::EndpointSlice),
        full::<Namespace>(client, Kind::Namespace),
        metadata_only::<StatefulSet>(client, Kind::StatefulSet, |metadata| {
            StatefulSet {
                metadata,
                ..StatefulSet::default()
            }
            .into()
        }),
        metadata_only::<ReplicaSet>(client, Kind::ReplicaSet, |metadata| {
            ReplicaSet {
                metadata,
                ..ReplicaSet::default()
            }
            .into()
        }),
        metadata_only::<Deployment>(client, Kind::Deployment, |metadata| {
            Deployment {
                metadata,
                ..Deployment::default()
            }
            .into()
        }),
    ];
    if legacy_leaders {
        clients.push(metadata_only::<ConfigMap>(client, Kind::ConfigMap, |m| {
            Object::metadata_only(Kind::ConfigMap, m)
        }));
        clients.push(metadata_only::<Endpoints>(client, Kind::Endpoints, |m| {
            Object::metadata_only(Kind::Endpoints, m)
        }));
    }
    clients
}
