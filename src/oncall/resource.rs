//! `RESOURCE NAME` as kubectl takes it (`pod`, `pods`, `po`, `pvc`,
//! `widgets.acme.example`, `Widget`) resolved against the resource types a
//! cluster serves (discovery) or a snapshot holds.

use std::any::TypeId;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, Secret,
    Service,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use serde_json::Value;

use super::OncallError;
use super::explain::Target;
use super::inventory::{Inventory, group_of, str_at};

/// One served resource type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// e.g. `pods`.
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
}

impl ResourceType {
    fn new(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        short: &[&str],
        namespaced: bool,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            short_names: short.iter().map(|s| (*s).to_owned()).collect(),
            namespaced,
        }
    }

    /// What kubectl also accepts for it: plural, singular, short names, kind.
    fn answers_to(&self, name: &str) -> bool {
        name == self.plural
            || name == self.singular
            || self.short_names.iter().any(|s| s == name)
            || name.eq_ignore_ascii_case(&self.kind)
    }
}

/// The built-in types on-call commands meet most (what a snapshot cannot
/// tell about itself: plural names and short names).
pub fn builtin() -> Vec<ResourceType> {
    vec![
        of::<Pod>(&["po"]),
        of::<PersistentVolumeClaim>(&["pvc"]),
        of::<PersistentVolume>(&["pv"]),
        of::<Namespace>(&["ns"]),
        of::<Node>(&["no"]),
        of::<ConfigMap>(&["cm"]),
        of::<Secret>(&[]),
        of::<Service>(&["svc"]),
        of::<Endpoints>(&["ep"]),
        of::<Deployment>(&["deploy"]),
        of::<StatefulSet>(&["sts"]),
        of::<DaemonSet>(&["ds"]),
        of::<ReplicaSet>(&["rs"]),
        of::<Job>(&[]),
        of::<CronJob>(&["cj"]),
        of::<Lease>(&[]),
        of::<VolumeAttachment>(&[]),
        of::<EndpointSlice>(&[]),
    ]
}

/// `K` as k8s-openapi describes it, with kubectl's short names.
fn of<K: k8s_openapi::Resource<Scope: 'static>>(short: &[&str]) -> ResourceType {
    let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
    ResourceType::new(
        K::GROUP,
        K::VERSION,
        K::KIND,
        K::URL_PATH_SEGMENT,
        short,
        namespaced,
    )
}

/// Built-in types plus every other kind the inventory holds (plural
/// guessed as kubectl's fallback does: lowercase kind + `s`).
pub fn from_inventory(inventory: &Inventory) -> Vec<ResourceType> {
    let mut types = builtin();
    for object in &inventory.objects {
        let api_version = str_at(object, &["apiVersion"]);
        let kind = str_at(object, &["kind"]);
        let group = group_of(api_version);
        if kind.is_empty() || types.iter().any(|t| t.kind == kind && t.group == group) {
            continue;
        }
        let version = api_version.rsplit('/').next().unwrap_or_default();
        let plural = format!("{}s", kind.to_lowercase());
        let namespaced = !str_at(object, &["metadata", "namespace"]).is_empty();
        types.push(ResourceType::new(
            group,
            version,
            kind,
            &plural,
            &[],
            namespaced,
        ));
    }
    types
}

/// The type `name` (optionally `name.group`) means.
pub fn resolve<'a>(name: &str, types: &'a [ResourceType]) -> Result<&'a ResourceType, OncallError> {
    let lower = name.to_lowercase();
    let plain = types.iter().filter(|t| t.answers_to(&lower));
    // Core before other groups, as kubectl prefers.
    if let Some(found) = plain.min_by_key(|t| !t.group.is_empty()) {
        return Ok(found);
    }
    if let Some((resource, group)) = lower.split_once('.')
        && let Some(found) = types
            .iter()
            .find(|t| t.group == group && t.answers_to(resource))
    {
        return Ok(found);
    }
    Err(OncallError::Input(format!(
        "the server doesn't have a resource type \"{name}\""
    )))
}

/// The object of type `rt` named `name` (in `namespace` when namespaced).
pub fn find_target(
    inventory: &Inventory,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
) -> Result<Target, OncallError> {
    let found = inventory.of_kind(&rt.group, &rt.kind).find(|o| {
        str_at(o, &["metadata", "name"]) == name
            && (!rt.namespaced || str_at(o, &["metadata", "namespace"]) == namespace)
    });
    match found {
        Some(object) => Ok(target(rt, object.clone())),
        None if rt.namespaced => Err(OncallError::Input(format!(
            "{} \"{name}\" not found in namespace \"{namespace}\"",
            rt.plural
        ))),
        None => Err(OncallError::Input(format!(
            "{} \"{name}\" not found",
            rt.plural
        ))),
    }
}

/// A target from its type and stored object.
pub fn target(rt: &ResourceType, object: Value) -> Target {
    let namespace = Some(str_at(&object, &["metadata", "namespace"]).to_owned())
        .filter(|ns| rt.namespaced && !ns.is_empty());
    Target {
        group: rt.group.clone(),
        version: rt.version.clone(),
        kind: rt.kind.clone(),
        resource: rt.plural.clone(),
        namespace,
        name: str_at(&object, &["metadata", "name"]).to_owned(),
        object,
    }
}

#[cfg(test)]
mod tests;
