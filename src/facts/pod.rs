//! Which pod a request is about, and the facts that hang off it.
//!
//! The pod comes from the cluster view, never from the request alone: a
//! review's `oldObject` is whatever its sender wrote. When the request does
//! carry the pod, its UID and node must match the cached pod's (a
//! same-name replacement, or a forged review, makes the pod Unknown).

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use kube::core::DynamicObject;
use serde::de::value::MapDeserializer;
use serde_json::Value;

use super::{Facts, PodFacts, PodScope, endpoints, identity, leader, node, owners, volumes};
use crate::admission::Request;
use crate::cluster::record::Pod;
use crate::cluster::{ClusterView, Unknown};
use crate::intent::Intent;

/// Pod-dependent groups, each Unknown when the pod itself is.
const FULL_GROUPS: &[&str] = &["pod", "node", "owners", "leader", "volumes", "endpoints"];
const OWNERSHIP_GROUPS: &[&str] = &["pod", "node", "owners"];

pub(super) fn gather_for_pod(
    facts: &mut Facts,
    intent: &Intent,
    request: &Request,
    view: &dyn ClusterView,
    now: Timestamp,
    scope: PodScope,
) {
    let groups = match scope {
        PodScope::Full { .. } => FULL_GROUPS,
        PodScope::Ownership => OWNERSHIP_GROUPS,
    };
    let pod = match resolve(intent, request, view) {
        Ok(pod) => pod,
        Err(why) => {
            for group in groups {
                facts.unknown(group, why.clone());
            }
            return;
        }
    };
    match owners::gather(&pod, view) {
        Ok(owners) => facts.owners = Some(owners),
        Err(why) => facts.unknown("owners", why),
    }
    let pod_facts = describe(Arc::unwrap_or_clone(pod));
    if let Some(node_name) = pod_facts.node_name.as_deref() {
        match node::gather(node_name, view, now) {
            Ok(node) => facts.node = Some(node),
            Err(why) => facts.unknown("node", why),
        }
    }
    if let PodScope::Full { needs } = scope {
        match leader::gather(&pod_facts, view, now) {
            Ok(leader) => facts.leader = Some(leader),
            Err(why) => facts.unknown("leader", why),
        }
        match volumes::gather_for_pod(&pod_facts, view) {
            Ok(volumes) => facts.volumes = Some(volumes),
            Err(why) => facts.unknown("volumes", why),
        }
        if needs.endpoints {
            match endpoints::gather(&pod_facts, view) {
                Ok(endpoints) => facts.endpoints = Some(endpoints),
                Err(why) => facts.unknown("endpoints", why),
            }
        }
    }
    facts.pod = Some(pod_facts);
}

/// The cached pod the request names, checked against the request's own copy.
fn resolve(
    intent: &Intent,
    request: &Request,
    view: &dyn ClusterView,
) -> Result<Arc<Pod>, Unknown> {
    let namespace = intent.target.namespace.as_deref().unwrap_or_default();
    let name = intent.target.name.as_str();
    let Some(pod) = view.pod(namespace, name)? else {
        return Err(Unknown {
            kind: "Pod".to_owned(),
            reason: format!("pod {namespace}/{name} is not in the cluster view"),
        });
    };
    let requested = request.old_object.as_ref().filter(|o| is_kind(o, "Pod"));
    if requested.is_some() {
        identity::same_pod(
            request,
            &intent.target,
            pod.meta.uid.as_deref(),
            pod.node_name.as_deref(),
        )?;
    }
    Ok(pod)
}

/// A request object without type information is taken to be the kind asked.
pub(super) fn is_kind(object: &DynamicObject, kind: &str) -> bool {
    object.types.as_ref().is_none_or(|t| t.kind == kind)
}

/// Decode a request object of `kind` into its k8s-openapi type; `None` when
/// absent or another kind.
pub(super) fn request_object<T>(object: Option<&DynamicObject>, kind: &str) -> Option<T>
where
    T: kube::Resource + serde::de::DeserializeOwned,
{
    let object = object.filter(|o| is_kind(o, kind))?;
    // Deserialize straight from the borrowed fields: `try_parse` clones the
    // whole object and re-serializes it into a fresh `Value` first, a fifth
    // of a force delete's decision time.
    let Value::Object(fields) = &object.data else {
        return None;
    };
    let metadata = serde_json::to_value(&object.metadata).ok()?;
    let types: Vec<(&str, Value)> = object
        .types
        .iter()
        .flat_map(|t| {
            [
                ("apiVersion", Value::String(t.api_version.clone())),
                ("kind", Value::String(t.kind.clone())),
            ]
        })
        .collect();
    let entries = fields
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|(key, value)| (key.as_str(), value))
        .chain(types.iter().map(|(key, value)| (*key, value)))
        .chain(std::iter::once(("metadata", &metadata)));
    T::deserialize(MapDeserializer::<_, serde_json::Error>::new(entries)).ok()
}

pub(super) fn describe(pod: Pod) -> PodFacts {
    let pod_ip = pod.pod_ip.filter(|ip| !ip.is_empty());
    let mut pod_ips = pod.pod_ips;
    pod_ips.retain(|ip| !ip.is_empty());
    if let Some(ip) = &pod_ip
        && !pod_ips.contains(ip)
    {
        pod_ips.insert(0, ip.clone());
    }
    PodFacts {
        namespace: pod.meta.namespace,
        name: pod.meta.name,
        uid: pod.meta.uid.unwrap_or_default(),
        node_name: pod.node_name.filter(|n| !n.is_empty()),
        pod_ip,
        pod_ips,
        phase: pod.phase,
        terminating: pod.terminating,
        labels: pod.labels,
        claims: pod.claims,
        finalizers: pod.finalizers,
    }
}
