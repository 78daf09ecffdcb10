//! What the aftermath of one force deletion should look like, checked against
//! a [`ClusterView`]. Pure: the verifier feeds it the live view and the clock.
//!
//! Items the API can show are `ok` or `pending` (a controller is behind) or
//! `failed` (a hazard that will not fix itself); node-side steps the API
//! cannot show are `manual`, with the command to run on the node
//! ([`super::manual`]).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Resource;

use super::crd::{ChecklistItem, ForceDeletionSpec, ItemState, Phase};
use super::manual;
use crate::cluster::{ClusterView, Lookup};

/// The taint that fences a node (its workloads can no longer run).
const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";

/// Renewals this close to the deletion may predate it (clock skew, in-flight).
const RENEW_SLACK: SignedDuration = SignedDuration::from_secs(5);

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
        items.extend(leases_released(spec, view, now));
        items.extend(no_split_brain(spec, view));
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

fn uid_of<K: Resource>(object: &K) -> Option<String> {
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
                .filter(|va| va.spec.node_name == node)
                .collect();
            let Some(va) = on_node.first() else {
                return item(name, ItemState::Ok, format!("PV {pv} is not attached to node {node}"));
            };
            let va_name = va.metadata.name.as_deref().unwrap_or("<unnamed>");
            let status = va.status.as_ref();
            let attached = status.is_some_and(|s| s.attached);
            let detach_error = status
                .and_then(|s| s.detach_error.as_ref())
                .and_then(|e| e.message.clone());
            let message = match (attached, detach_error) {
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
            Ok(found) => slices.extend(found.iter().map(|s| {
                format!(
                    "{}/{}",
                    s.metadata.namespace.as_deref().unwrap_or(""),
                    s.metadata.name.as_deref().unwrap_or("")
                )
            })),
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

fn leases_released(
    spec: &ForceDeletionSpec,
    view: &dyn ClusterView,
    now: Timestamp,
) -> Vec<ChecklistItem> {
    let pod = spec.object.name.as_str();
    let requested = spec.requested_at.0;
    spec.leases
        .iter()
        .map(|recorded| {
            let name = format!("lease-released/{}/{}", recorded.namespace, recorded.name);
            let held = match view.leases_held_by(&recorded.namespace, pod) {
                Ok(held) => held,
                Err(err) => return unknown(name, "Leases", &err),
            };
            let Some(lease) = held
                .iter()
                .find(|l| l.metadata.name.as_deref() == Some(recorded.name.as_str()))
            else {
                return item(
                    name,
                    ItemState::Ok,
                    format!("Lease {} was released or taken over", recorded.name),
                );
            };
            lease_item(
                name,
                lease,
                recorded.holder.as_str(),
                pod,
                requested,
                now,
                view,
                spec,
            )
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn lease_item(
    name: String,
    lease: &Arc<Lease>,
    recorded_holder: &str,
    pod: &str,
    requested: Timestamp,
    now: Timestamp,
    view: &dyn ClusterView,
    spec: &ForceDeletionSpec,
) -> ChecklistItem {
    let lease_name = lease.metadata.name.as_deref().unwrap_or("");
    let lease_spec = lease.spec.as_ref();
    let holder = lease_spec
        .and_then(|s| s.holder_identity.as_deref())
        .unwrap_or("");
    let renewed = lease_spec.and_then(|s| s.renew_time.as_ref()).map(|t| t.0);
    let acquired = lease_spec
        .and_then(|s| s.acquire_time.as_ref())
        .map(|t| t.0);
    let duration = SignedDuration::from_secs(i64::from(
        lease_spec
            .and_then(|s| s.lease_duration_seconds)
            .unwrap_or(0),
    ));
    let expires = renewed
        .or(acquired)
        .and_then(|t| t.checked_add(duration).ok());
    if expires.is_none_or(|e| e <= now) {
        return item(
            name,
            ItemState::Ok,
            format!("Lease {lease_name} held by {holder} has expired"),
        );
    }
    if acquired.is_some_and(|a| a > requested) {
        return item(
            name,
            ItemState::Ok,
            format!("Lease {lease_name} was re-acquired by {holder} after the deletion"),
        );
    }
    let renewed_after =
        renewed.is_some_and(|r| r > requested.saturating_add(RENEW_SLACK).unwrap_or(requested));
    // An identity equal to the pod name is ambiguous once a same-name
    // replacement runs; a `<pod>_<id>` identity is the old process's own.
    let replacement_may_hold = holder == pod && replacement(spec, view).is_some();
    if renewed_after && holder == recorded_holder && !replacement_may_hold {
        let node = spec.node.as_deref().unwrap_or("its node");
        return item(
            name,
            ItemState::Failed,
            format!(
                "Lease {lease_name} is still renewed by {holder} after the force deletion: the old process is alive on {node}; stop it there"
            ),
        );
    }
    item(
        name,
        ItemState::Pending,
        match expires {
            Some(at) => format!(
                "Lease {lease_name} is still held by {holder}; it expires at {at} unless renewed"
            ),
            None => format!("Lease {lease_name} is still held by {holder}"),
        },
    )
}

/// A pod with the deleted pod's name but another UID, not terminal.
fn replacement(spec: &ForceDeletionSpec, view: &dyn ClusterView) -> Option<Arc<Pod>> {
    let ns = spec.object.namespace.as_deref()?;
    let pod = view.pod(ns, &spec.object.name).ok().flatten()?;
    let other = pod.metadata.uid.is_some() && pod.metadata.uid != spec.object.uid;
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let terminal = matches!(phase, Some("Succeeded" | "Failed"));
    (other && !terminal).then_some(pod)
}

fn no_split_brain(spec: &ForceDeletionSpec, view: &dyn ClusterView) -> Option<ChecklistItem> {
    const NAME: &str = "no-split-brain";
    let old_node = spec.node.as_deref()?;
    let ns = spec.object.namespace.as_deref()?;
    if let Err(err) = view.pod(ns, &spec.object.name) {
        return Some(unknown(NAME, "for a replacement pod", &err));
    }
    let Some(new) = replacement(spec, view) else {
        return Some(item(
            NAME,
            ItemState::Ok,
            "no replacement with the same name is running",
        ));
    };
    let new_node = new.spec.as_ref().and_then(|s| s.node_name.as_deref());
    let subject = format!("{ns}/{}", spec.object.name);
    let fenced = match view.node(old_node) {
        Ok(node) => node.as_deref().is_none_or(is_fenced),
        Err(err) => return Some(unknown(NAME, "whether the old node is fenced", &err)),
    };
    Some(match new_node {
        _ if fenced => item(
            NAME,
            ItemState::Ok,
            format!("replacement {subject} runs; the old node {old_node} is fenced"),
        ),
        Some(node) if node == old_node => item(
            NAME,
            ItemState::Ok,
            format!(
                "replacement {subject} runs on the same node {old_node}, whose kubelet removes the old containers"
            ),
        ),
        // Bound nowhere yet: not running, but about to.
        None => item(
            NAME,
            ItemState::Pending,
            format!(
                "replacement {subject} is being scheduled while the old node {old_node} is not fenced"
            ),
        ),
        Some(node) => ChecklistItem {
            command: Some(format!(
                "kubectl taint nodes {old_node} {OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute"
            )),
            ..item(
                NAME,
                ItemState::Failed,
                format!(
                    "split brain risk: replacement {subject} runs on node {node} while the old node {old_node} is not fenced and may still run the old pod; confirm {old_node} is down, then taint it out-of-service"
                ),
            )
        },
    })
}

fn is_fenced(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|taints| taints.iter().any(|t| t.key == OUT_OF_SERVICE_TAINT))
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
    let status = job.status.clone().unwrap_or_default();
    let uid = spec.object.uid.as_deref().unwrap_or("");
    let uncounted = status.uncounted_terminated_pods.as_ref().is_some_and(|u| {
        [&u.succeeded, &u.failed]
            .into_iter()
            .flatten()
            .any(|uids| uids.iter().any(|u| u == uid))
    });
    let counts = format!(
        "active={} succeeded={} failed={}",
        status.active.unwrap_or(0),
        status.succeeded.unwrap_or(0),
        status.failed.unwrap_or(0)
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
