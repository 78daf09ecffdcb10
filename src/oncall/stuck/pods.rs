//! Pods, claims and volumes: what the kubelet, the node and the volume
//! protection finalizers are waiting for.

use k8s_openapi::jiff::Timestamp;

use super::{Diagnosis, Level, controller_advice};
use crate::oncall::controllers;
use crate::oncall::evidence::{Evidence, NodeState, Terminating, kinds};
use crate::oncall::render::age;
use crate::oncall::seconds_between;

const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute";

/// A pod is finished by the kubelet of its node: is there one that can?
pub(super) fn pod(evidence: &Evidence, object: &Terminating, d: &mut Diagnosis) {
    if !evidence.has(kinds::POD) {
        return d.cannot_tell(evidence.missing(kinds::POD));
    }
    let ns = object.namespace.as_deref().unwrap_or_default();
    let Some(pod) = (evidence.pods.iter()).find(|p| p.namespace == ns && p.name == object.name)
    else {
        return;
    };
    let Some(node_name) = pod.node.as_deref() else {
        d.finding(
            "not-scheduled",
            "never scheduled: no kubelet has anything to stop",
        );
        return;
    };
    if !evidence.has(kinds::NODE) {
        return d.cannot_tell(evidence.missing(kinds::NODE));
    }
    let overdue = seconds_between(object.deletion_timestamp, evidence.now);
    match evidence.nodes.get(node_name) {
        None => {
            d.finding("node-gone", format!("node {node_name} no longer exists: the pod garbage collector deletes pods of deleted nodes"));
            pod_gc(evidence, object, d);
        }
        Some(node) if node.fenced => {
            d.finding("node-fenced", format!("node {node_name} is fenced (out-of-service): the pod garbage collector deletes its pods"));
            pod_gc(evidence, object, d);
        }
        // Listed only once its deletionTimestamp (for a pod: the end of
        // its grace period) has passed.
        Some(node) if node.ready.as_deref() == Some("True") => {
            d.finding("node-ready", format!("node {node_name} is Ready, yet its kubelet has not finished the pod {} after the grace period ended", age(overdue)));
            d.advise(
                Level::Human,
                format!("look at the kubelet and the container runtime on {node_name} (a hung container or unmount); a force delete would leave whatever hangs running"),
                vec![
                    format!("kubectl -n {ns} describe pod {}", object.name),
                    format!("kubectl get events -n {ns} --field-selector involvedObject.name={}", object.name),
                ],
            );
        }
        Some(node) => unreachable_node(node, evidence.now, d),
    }
}

fn unreachable_node(node: &NodeState, now: Timestamp, d: &mut Diagnosis) {
    let name = &node.name;
    let status = node.ready.as_deref().unwrap_or("missing");
    let since = |at: Option<Timestamp>, what: &str| {
        at.map(|t| format!(", {what} {} ago", age(seconds_between(t, now))))
            .unwrap_or_default()
    };
    d.finding(
        "node-unreachable",
        format!(
            "node {name} is not Ready (Ready={status}{}{}) and not fenced: its kubelet cannot confirm the containers stopped, so the pod stays",
            since(node.ready_since, "since"),
            since(node.heartbeat, "last heartbeat"),
        ),
    );
    d.advise(
        Level::Act,
        format!("if {name} is really down (powered off, VM gone), fence it: the pod garbage collector then deletes its pods and volumes detach; otherwise bring {name} back and its kubelet finishes"),
        vec![format!("kubectl taint nodes {name} {OUT_OF_SERVICE}")],
    );
}

/// The pod GC runs in kube-controller-manager.
fn pod_gc(evidence: &Evidence, object: &Terminating, d: &mut Diagnosis) {
    let check = controllers::kube_controller_manager(evidence);
    controller_advice(object, &check, d);
    d.controllers.push(check);
}

/// `kubernetes.io/pvc-protection` holds a claim while a pod uses it.
pub(super) fn claim(
    evidence: &Evidence,
    object: &Terminating,
    d: &mut Diagnosis,
) -> &'static [&'static str] {
    if !object.finalizers.iter().any(|f| f == PVC_PROTECTION) {
        return &[];
    }
    if !evidence.has(kinds::POD) {
        d.cannot_tell(evidence.missing(kinds::POD));
        return &[PVC_PROTECTION];
    }
    let ns = object.namespace.as_deref().unwrap_or_default();
    let users: Vec<_> = (evidence.pods.iter())
        .filter(|p| p.namespace == ns && !p.terminal() && p.claims.contains(&object.name))
        .collect();
    if users.is_empty() {
        super::finalizer_controller(evidence, object, PVC_PROTECTION, d);
        return &[PVC_PROTECTION];
    }
    let names: Vec<&str> = users.iter().map(|p| p.name.as_str()).collect();
    d.finding(
        "claim-in-use",
        format!(
            "held by {PVC_PROTECTION}: pods {} still use it",
            names.join(", ")
        ),
    );
    if users.iter().all(|p| p.terminating) {
        d.advise(Level::Wait, "those pods are Terminating themselves (see them in this list); the claim goes once they are gone", Vec::new());
    } else {
        d.advise(
            Level::Act,
            "delete (gracefully) or move the pods that still use it; the claim goes once none does",
            vec![format!("kubectl -n {ns} delete pod {}", names.join(" "))],
        );
    }
    &[PVC_PROTECTION]
}

/// `kubernetes.io/pv-protection` holds a volume while it is bound or attached.
pub(super) fn volume(
    evidence: &Evidence,
    object: &Terminating,
    d: &mut Diagnosis,
) -> &'static [&'static str] {
    if !object.finalizers.iter().any(|f| f == PV_PROTECTION) {
        return &[];
    }
    let volume = evidence.volumes.get(&object.name);
    let bound = volume
        .and_then(|v| v.claim.as_ref())
        .filter(|key| evidence.claims.contains_key(*key));
    let attached: Vec<_> = (evidence.attachments.iter())
        .filter(|a| a.volume == object.name && a.attached)
        .collect();
    if let Some((ns, claim)) = bound {
        d.finding(
            "volume-bound",
            format!("held by {PV_PROTECTION}: bound to claim {ns}/{claim}, which still exists"),
        );
        d.advise(
            Level::Act,
            format!("delete the claim {ns}/{claim} first (if it is stuck too, it is in this list)"),
            vec![format!("kubectl -n {ns} delete pvc {claim}")],
        );
    }
    for a in &attached {
        d.finding(
            "volume-attached",
            format!(
                "held by {PV_PROTECTION}: attached to node {} (VolumeAttachment {})",
                a.node, a.name
            ),
        );
        d.advise(
            Level::Wait,
            format!(
                "the attacher detaches it once no pod on {} uses it; if {} is down, fence it",
                a.node, a.node
            ),
            Vec::new(),
        );
    }
    if bound.is_none() && attached.is_empty() {
        if !(evidence.has(kinds::CLAIM) && evidence.has(kinds::ATTACHMENT)) {
            d.cannot_tell(format!(
                "{}; {}",
                evidence.missing(kinds::CLAIM),
                evidence.missing(kinds::ATTACHMENT)
            ));
        } else {
            super::finalizer_controller(evidence, object, PV_PROTECTION, d);
        }
    }
    &[PV_PROTECTION]
}
