//! Which object the cluster says a request is about.
//!
//! Anyone who can reach the webhook port can post a review, and a review's
//! `object`/`oldObject` are whatever its sender wrote. The cleanup record
//! is therefore named from the UID the cluster view holds for the target,
//! never from the request: a request whose object is not in the view, or
//! whose UID (or a pod's node) differs from it, has no identity, and
//! nothing is recorded for it. Kinds forcegate does not watch (Services,
//! DaemonSets, custom resources added to the finalizer webhook) can only be
//! named from the request; the webhook port must then be reachable by the API server alone
//! (docs/operations.md, "Threat model").

use super::{Facts, IdentityFacts};
use crate::admission::Request;
use crate::cluster::record::Record;
use crate::cluster::{ClusterView, Lookup, Unknown};
use crate::intent::{Intent, ObjectRef};

/// The fact group's name in [`Facts::unknown`].
pub(super) const GROUP: &str = "identity";

/// Check the request's object against the view and record its UID.
pub(super) fn gather(facts: &mut Facts, intent: &Intent, view: &dyn ClusterView) {
    let target = &intent.target;
    let uid = match cached_uid(target, view) {
        Some(cached) => cached.and_then(|uid| matches(target, uid)),
        None => target
            .uid
            .clone()
            .filter(|uid| !uid.is_empty())
            .ok_or_else(|| Unknown {
                kind: target.kind.clone(),
                reason: format!("the request names no uid for {}", describe(target)),
            }),
    };
    match uid {
        Ok(uid) => facts.identity = Some(IdentityFacts { uid }),
        Err(why) => facts.unknown(GROUP, why),
    }
}

/// The UID the view holds for `target`; `None` for kinds it does not watch.
fn cached_uid(target: &ObjectRef, view: &dyn ClusterView) -> Option<Lookup<String>> {
    let namespace = target.namespace.as_deref().unwrap_or_default();
    let name = target.name.as_str();
    fn uid<R: Record>(found: Option<std::sync::Arc<R>>) -> Option<String> {
        found.and_then(|record| record.meta().uid.clone())
    }
    let found = match (target.group.as_str(), target.resource.as_str()) {
        ("", "pods") => view.pod(namespace, name).map(uid),
        ("", "persistentvolumeclaims") => view.pvc(namespace, name).map(uid),
        ("", "persistentvolumes") => view.pv(name).map(uid),
        ("", "namespaces") => view.namespace(name).map(uid),
        ("apps", "deployments") => view.deployment(namespace, name).map(uid),
        ("apps", "replicasets") => view.replica_set(namespace, name).map(uid),
        ("apps", "statefulsets") => view.stateful_set(namespace, name).map(uid),
        ("batch", "jobs") => view.job(namespace, name).map(uid),
        ("batch", "cronjobs") => view.cron_job(namespace, name).map(uid),
        _ => return None,
    };
    Some(found.and_then(|uid| {
        uid.filter(|uid| !uid.is_empty()).ok_or_else(|| Unknown {
            kind: target.kind.clone(),
            reason: format!(
                "{} is not in forcegate's view of the cluster",
                describe(target)
            ),
        })
    }))
}

/// The cached UID, when the request names the same one (or none).
fn matches(target: &ObjectRef, cached: String) -> Lookup<String> {
    match target.uid.as_deref() {
        Some(asked) if asked != cached => Err(Unknown {
            kind: target.kind.clone(),
            reason: format!(
                "the request's {} has uid {asked}, the cluster's has uid {cached}",
                describe(target)
            ),
        }),
        _ => Ok(cached),
    }
}

/// `Pod db/postgres-0`, `Namespace shop`.
pub(super) fn describe(target: &ObjectRef) -> String {
    let kind = if target.kind.is_empty() {
        target.resource.as_str()
    } else {
        target.kind.as_str()
    };
    match target.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        Some(ns) => format!("{kind} {ns}/{}", target.name),
        None => format!("{kind} {}", target.name),
    }
}

/// The request's pod against the cached one: same UID, same node.
pub(super) fn same_pod(
    request: &Request,
    target: &ObjectRef,
    cached_uid: Option<&str>,
    cached_node: Option<&str>,
) -> Lookup<()> {
    let Some(pod) = request.old_object.as_ref() else {
        return Ok(());
    };
    let uid = pod.metadata.uid.as_deref();
    let node = pod
        .data
        .get("spec")
        .and_then(|spec| spec.get("nodeName"))
        .and_then(serde_json::Value::as_str)
        .filter(|node| !node.is_empty());
    let cached_node = cached_node.filter(|node| !node.is_empty());
    if uid.is_some() && uid != cached_uid {
        return Err(Unknown {
            kind: "Pod".to_owned(),
            reason: format!(
                "the request's {} has uid {}, the cluster's has uid {}",
                describe(target),
                uid.unwrap_or("(none)"),
                cached_uid.unwrap_or("(none)")
            ),
        });
    }
    if node != cached_node {
        return Err(Unknown {
            kind: "Pod".to_owned(),
            reason: format!(
                "the request's {} is on node {}, the cluster's on node {}",
                describe(target),
                node.unwrap_or("(none)"),
                cached_node.unwrap_or("(none)")
            ),
        });
    }
    Ok(())
}
