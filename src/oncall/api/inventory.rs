//! `stuck`'s inventory from the API: full lists of the kinds evidence reads
//! (cluster-wide: a finalizer's controller may run in any namespace), the
//! EndpointSlices of webhook Services, and metadata-only lists of every
//! other listable type in scope (any custom resource included), which is
//! where deletionTimestamps and a namespace's remaining contents are found.

use futures::StreamExt;
use futures::future::BoxFuture;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::{Value, json};

use super::discovery::{Served, discover};
use super::{Cluster, api_resource, list_all, list_metadata_all, refused};
use crate::oncall::OncallError;
use crate::oncall::evidence::kinds;
use crate::oncall::inventory::{Gap, Inventory, group_kind};

/// Lists in flight at once.
const CONCURRENT: usize = 8;

/// Full objects, cluster-wide. EndpointSlices are read per webhook Service.
const FULL: [&str; 13] = [
    kinds::POD,
    kinds::NODE,
    kinds::CLAIM,
    kinds::VOLUME,
    kinds::ATTACHMENT,
    kinds::NAMESPACE,
    kinds::API_SERVICE,
    kinds::VALIDATING,
    kinds::MUTATING,
    kinds::DEPLOYMENT,
    kinds::STATEFUL_SET,
    kinds::DAEMON_SET,
    kinds::LEASE,
];

/// Events never hold a namespace up for long and are the bulk of most clusters.
const SKIPPED: [&str; 2] = ["Event", "Event.events.k8s.io"];

type Listed = BoxFuture<'static, (String, Result<Vec<Value>, kube::Error>)>;

fn typed(ar: &ApiResource, value: Value) -> Value {
    let mut value = value;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), ar.api_version.clone().into());
        map.insert("kind".into(), ar.kind.clone().into());
    }
    value
}

fn full(api: Api<DynamicObject>, ar: ApiResource) -> Listed {
    Box::pin(async move {
        let gk = group_kind(&ar.api_version, &ar.kind);
        let listed = list_all(&api).await.map(|objects| {
            (objects.iter())
                .filter_map(|o| serde_json::to_value(o).ok())
                .map(|v| typed(&ar, v))
                .collect()
        });
        (gk, listed)
    })
}

fn metadata(api: Api<DynamicObject>, ar: ApiResource) -> Listed {
    Box::pin(async move {
        let gk = group_kind(&ar.api_version, &ar.kind);
        let listed = list_metadata_all(&api).await.map(|objects| {
            (objects.into_iter())
                .map(|o| json!({"apiVersion": ar.api_version, "kind": ar.kind, "metadata": o.metadata}))
                .collect()
        });
        (gk, listed)
    })
}

/// Read what `stuck` needs; `namespace` limits the metadata lists.
pub async fn inventory(
    cluster: &Cluster,
    namespace: Option<&str>,
) -> Result<Inventory, OncallError> {
    let (served, stale) = discover(cluster).await?;
    let mut inventory = Inventory {
        gaps: stale,
        ..Inventory::default()
    };
    let client = &cluster.client;
    let mut lists: Vec<Listed> = Vec::new();
    for s in served.iter().filter(|s| s.lists()) {
        let ar = api_resource(&s.resource);
        let gk = group_kind(&ar.api_version, &ar.kind);
        if FULL.contains(&gk.as_str()) {
            lists.push(full(Api::all_with(client.clone(), &ar), ar));
        } else if SKIPPED.contains(&gk.as_str()) || gk == kinds::SLICE {
            continue;
        } else if s.resource.namespaced {
            let api = match namespace {
                Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
                None => Api::all_with(client.clone(), &ar),
            };
            lists.push(metadata(api, ar));
        } else if namespace.is_none() {
            lists.push(metadata(Api::all_with(client.clone(), &ar), ar));
        }
    }
    let results: Vec<_> = futures::stream::iter(lists)
        .buffer_unordered(CONCURRENT)
        .collect()
        .await;
    for (gk, result) in results {
        add(cluster, &mut inventory, gk, result)?;
    }
    webhook_slices(cluster, &served, &mut inventory).await?;
    Ok(inventory)
}

fn add(
    cluster: &Cluster,
    inventory: &mut Inventory,
    gk: String,
    result: Result<Vec<Value>, kube::Error>,
) -> Result<(), OncallError> {
    match result {
        Ok(objects) => {
            inventory.complete.insert(gk);
            inventory.objects.extend(objects);
            Ok(())
        }
        Err(err) => match refused(&err) {
            Some(reason) => {
                inventory.gaps.push(Gap { what: gk, reason });
                Ok(())
            }
            None => Err(cluster.error(&format!("listing {gk}"), err)),
        },
    }
}

/// The EndpointSlices of every Service a webhook calls.
async fn webhook_slices(
    cluster: &Cluster,
    served: &[Served],
    inventory: &mut Inventory,
) -> Result<(), OncallError> {
    let Some(slices) = served
        .iter()
        .find(|s| s.resource.group == "discovery.k8s.io" && s.resource.kind == "EndpointSlice")
    else {
        return Ok(());
    };
    let ar = api_resource(&slices.resource);
    let mut services: Vec<(String, String)> = Vec::new();
    for config in inventory.objects.iter().filter(|o| {
        let gk = group_kind(
            o["apiVersion"].as_str().unwrap_or_default(),
            o["kind"].as_str().unwrap_or_default(),
        );
        gk == kinds::VALIDATING || gk == kinds::MUTATING
    }) {
        for hook in config["webhooks"].as_array().into_iter().flatten() {
            let service = &hook["clientConfig"]["service"];
            if let (Some(ns), Some(name)) =
                (service["namespace"].as_str(), service["name"].as_str())
                && !services.iter().any(|(n, s)| n == ns && s == name)
            {
                services.push((ns.to_owned(), name.to_owned()));
            }
        }
    }
    let mut found = Vec::new();
    for (ns, name) in &services {
        let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), ns, &ar);
        let params = ListParams::default().labels(&format!("kubernetes.io/service-name={name}"));
        match api.list(&params).await {
            Ok(list) => found.extend(
                list.items
                    .iter()
                    .filter_map(|o| serde_json::to_value(o).ok())
                    .map(|v| typed(&ar, v)),
            ),
            Err(err) => return add(cluster, inventory, kinds::SLICE.to_owned(), Err(err)),
        }
    }
    add(cluster, inventory, kinds::SLICE.to_owned(), Ok(found))
}
