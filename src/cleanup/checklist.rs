//! What the aftermath of one force deletion should look like, checked against
//! a [`ClusterView`]. Pure: the verifier feeds it the live view and the clock.
//!
//! Items the API can show are `ok` or `pending` (a controller is behind) or
//! `failed` (a hazard that will not fix itself); node-side steps the API
//! cannot show are `manual`, with the command to run on the node
//! ([`super::manual`]). Signs of a ghost (leases, split brain) are in
//! [`ghost`].

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::crd::{ChecklistItem, ForceDeletionSpec, ItemState, Phase};
use super::manual;
use crate::cluster::record::Record;
use crate::cluster::{ClusterView, Lookup};

mod ghost;

/// Every item for `spec`, in a stable order.
pub fn evaluate(
    spec: &ForceDeletionSpec,
    view: &dyn ClusterView,
    now: Timestamp,
) -> Vec<ChecklistItem> {
    let mut items = Vec::new();
    if spec.action.object_deleting {
        items.push(object_gone(spec, view));
    }
    if is_pod(spec) {
        items.extend(volumes_detached(spec, view));
        items.extend(endpoints_released(spec, view));
        items.extend(ghost::leases_released(spec, view, now));
        items.extend(ghost::no_split_brain(spec, view));
        items.extend(job_settled(spec, view));
        items.extend(manual::node_steps(spec));
    }
    items.extend(manual::skipped_finalizers(spec));
    items
}

/// Clean once everything the API can show is `ok` (manual steps are the
/// operator's, listed but not blocking); NeedsAttention on a failed item or
/// once `deadline` has passed since the deletion without getting clean.
pub fn phase(items: &[ChecklistItem], age: Duration, deadline: Duration) -> Phase {
    if items.iter().any(|i| i.state == ItemState::Failed) {
        Phase::NeedsAttention
    } else if items
        .iter()
        .all(|i| matches!(i.state, ItemState::Ok | ItemState::Manual))
    {
        Phase::Clean
    } else if age >= deadline {
        Phase::NeedsAttention
    } else {
        Phase::Verifying
    }
}

fn is_pod(spec: &ForceDeletionSpec) -> bool {
    spec.object.group.is_empty() && spec.object.resource == "pods"
}

fn item(name: impl Into<String>, state: ItemState, message: impl Into<String>) -> ChecklistItem {
    ChecklistItem {
        name: name.into(),
        state,
        message: message.into(),
        command: None,
    }
}

fn unknown(name: impl Into<String>, what: &str, err: &crate::cluster::Unknown) -> ChecklistItem {
    item(
        name,
        ItemState::Pending,
        format!("cannot check {what} yet: {err}"),
    )
}

fn object_gone(spec: &ForceDeletionSpec, view: &dyn ClusterView) -> ChecklistItem {
    const NAME: &str = "object-gone";
    let object = &spec.object;
    let ns = object.namespace.as_deref().unwrap_or("");
    let name = object.name.as_str();
    let uid = object.uid.as_deref();
    let found: Option<Lookup<Option<Option<String>>>> =
        match (object.group.as_str(), object.resource.as_str()) {
            ("", "pods") => Some(match uid {
                Some(uid) => view.pod_by_uid(uid).map(|p| p.map(|p| uid_of(&*p))),
                None => view.pod(ns, name).map(|p| p.map(|p| uid_of(&*p))),
            }),
            ("", "persistentvolumeclaims") => {
                Some(view.pvc(ns, name).map(|o| o.map(|o| uid_of(&*o))))
            }
            ("", "persistentvolumes") => Some(view.pv(name).map(|o| o.map(|o| uid_of(&*o)))),
            ("", "namespaces") => Some(view.namespace(name).map(|o| o.map(|o| uid_of(&*o)))),
            ("batch", "jobs") => Some(view.job(ns, name).map(|o| o.map(|o| uid_of(&*o)))),
            ("batch", "cronjobs") => Some(view.cron_job(ns, name).map(|o| o.map(|o| uid_of(&*o)))),
            ("apps", "statefulsets") => {
                Some(view.stateful_set(ns, name).map(|o| o.map(|o| uid_of(&*o))))
            }
            ("apps", "replicasets") => {
                Some(view.replica_set(ns, name).map(|o| o.map(|o| uid_of(&*o))))
            }
            ("apps", "deployments") => {
                Some(view.deployment(ns, name).map(|o| o.map(|o| uid_of(&*o))))
            }
            _ => None,
        };
    let subject = &spec.subject;
    match found {
        None => ChecklistItem {
            command: Some(manual::kubectl_get_uid(object)),
            ..item(
                NAME,
                ItemState::Manual,
                format!(
                    "forcegate does not watch {}; check that {subject} is gone (or has a new UID)",
                    object.resource
                ),
            )
        },
        Some(Err(err)) => unknown(NAME, "whether the object is gone", &err),
        Some(Ok(None)) => item(NAME, ItemState::Ok, format!("{subject} is gone")),
        // Same name, new UID: the old object is gone, a new one took its name.
        Some(Ok(Some(found))) if uid.is_some() && found.as_deref() != uid => item(
            NAME,
            ItemState::Ok,
            format!("{subject} is gone (the name now belongs to a new object)"),
        ),
        Some(Ok(Some(_))) => item(
            NAME,
            ItemState::Pending,
            format!("{subject} still exists; waiting for its finalizers and controllers"),
        ),
    }
}

fn uid_of<R: Record>(object: &R) -> Option<String> {
    object.meta().uid.clone()
}

fn volumes_detached(spec: &ForceDeletionSpec, view: &dyn ClusterView) -> Vec<ChecklistItem> {
    let Some(node) = spec.node.as_deref() else {
        return Vec::new();
    };
    let pvs: BTreeSet<&str> = spec
        .volumes
        .iter()
        .filter_map(|v| v.persistent_volume.as_deref())
        .collect();
    pvs.into_iter()
        .map(|pv| {
            let name = format!("volume-detached/{pv}");
            let attachments = match view.volume_attachments_for_pv(pv) {
                Ok(list) => list,
                Err(err) => return unknown(name, "VolumeAttachments", &err),
            };
            let on_node: Vec<_> = attachments
                .iter()
                .filter(|va| va.node_name == node)
                .collect();
            let Some(va) = on_node.first() else {
                return item(name, ItemState::Ok, format!("PV {pv} is not attached to node {node}"));
            };
            let va_name = Some(va.meta.name.as_str())
                .filter(|n| !n.is_empty())
                .unwrap_or("<unnamed>");
            let message = match (va.attached, va.detach_error.clone()) {
                (_, Some(error)) => format!(
                    "VolumeAttachment {va_name} of PV {pv} on node {node} fails to detach: {error}"
                ),
                (true, None) => format!(
                    "VolumeAttachment {va_name} still attaches PV {pv} to node {node}; an RWO disk cannot move until it detaches"
                ),
                (false, None) => format!("VolumeAttachment {va_name} of PV {pv} on node {node} is detaching"),
            };
            item(name, ItemState::Pending, message)
        })
        .collect()
}

fn endpoints_released(spec: &ForceDeletionSpec, view: &dyn ClusterView) -> Option<ChecklistItem> {
    const NAME: &str = "endpoints-released";
    let uid = spec.object.uid.as_deref()?;
    let ips: Vec<Option<&str>> = if spec.pod_ips.is_empty() {
        vec![None]
    } else {
        spec.pod_ips.iter().map(|ip| Some(ip.as_str())).collect()
    };
    let mut slices = BTreeSet::new();
    for ip in ips {
        match view.endpoint_slices_for_pod(uid, ip) {
            Ok(found) => slices.extend(
                found
                    .iter()
                    .map(|s| format!("{}/{}", s.meta.namespace, s.meta.name)),
            ),
            Err(err) => return Some(unknown(NAME, "EndpointSlices", &err)),
        }
    }
    Some(if slices.is_empty() {
        item(
            NAME,
            ItemState::Ok,
            "no EndpointSlice references the pod's UID or IP",
        )
    } else {
        let list = slices.into_iter().collect::<Vec<_>>().join(", ");
        item(
            NAME,
            ItemState::Pending,
            format!("EndpointSlices still send traffic to the pod: {list}"),
        )
    })
}

fn job_settled(spec: &ForceDeletionSpec, view: &dyn ClusterView) -> Option<ChecklistItem> {
    const NAME: &str = "job-settled";
    let job_name = spec.job.as_deref()?;
    let ns = spec.object.namespace.as_deref()?;
    let job = match view.job(ns, job_name) {
        Ok(Some(job)) => job,
        Ok(None) => {
            return Some(item(
                NAME,
                ItemState::Ok,
                format!("Job {ns}/{job_name} is gone"),
            ));
        }
        Err(err) => return Some(unknown(NAME, "the Job", &err)),
    };
    let uid = spec.object.uid.as_deref().unwrap_or("");
    let uncounted = job.uncounted.iter().any(|u| u == uid);
    let counts = format!(
        "active={} succeeded={} failed={}",
        job.active, job.succeeded, job.failed
    );
    Some(if uncounted {
        item(
            NAME,
            ItemState::Pending,
            format!("Job {ns}/{job_name} has not counted the pod yet ({counts})"),
        )
    } else {
        item(
            NAME,
            ItemState::Ok,
            format!("Job {ns}/{job_name} counts settled ({counts})"),
        )
    })
}

#[cfg(test)]
mod tests;
