//! Signs that the force-deleted pod lives on: its Leases still renewed, or a
//! same-name replacement running while the old node is not fenced.

use std::sync::Arc;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::{item, unknown};
use crate::cleanup::crd::{ChecklistItem, ForceDeletionSpec, ItemState};
use crate::cluster::ClusterView;
use crate::cluster::record::{Lease, Node, Pod};

/// The taint that fences a node (its workloads can no longer run).
const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";

/// Renewals this close to the deletion may predate it (clock skew, in-flight).
const RENEW_SLACK: SignedDuration = SignedDuration::from_secs(5);

pub(super) fn leases_released(
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
            let Some(lease) = held.iter().find(|l| l.meta.name == recorded.name) else {
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
    let lease_name = lease.meta.name.as_str();
    let holder = lease.holder.as_deref().unwrap_or("");
    let renewed = lease.renew_time;
    let acquired = lease.acquire_time;
    let duration = SignedDuration::from_secs(i64::from(lease.duration_seconds.unwrap_or(0)));
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
    let other = pod.meta.uid.is_some() && pod.meta.uid != spec.object.uid;
    let phase = pod.phase.as_deref();
    let terminal = matches!(phase, Some("Succeeded" | "Failed"));
    (other && !terminal).then_some(pod)
}

pub(super) fn no_split_brain(
    spec: &ForceDeletionSpec,
    view: &dyn ClusterView,
) -> Option<ChecklistItem> {
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
    let new_node = new.node_name.as_deref();
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
    node.taints.iter().any(|t| t == OUT_OF_SERVICE_TAINT)
}
