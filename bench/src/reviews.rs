//! AdmissionReview bodies aimed at objects of a synthetic cluster, shaped as
//! kube-apiserver sends them (full `oldObject`, adjusted DeleteOptions).
//!
//! Shared by `benches/admission.rs`, `bench_fixtures` and `decision_scaling`
//! so the criterion numbers and the load run judge the same requests. Targets exist in the snapshot, so every decision is a real one:
//! the facts are found, the policies fire or not for the reason they say.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use serde_json::{Value, json};

use crate::synthetic::SyntheticCluster;

/// One kind of request in the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// `kubectl delete pod --force --grace-period=0` of a StatefulSet pod
    /// holding its leader Lease on a Ready node: three policies deny.
    LeaderForceDelete,
    /// Force delete of a StatefulSet pod whose volume is attached on an
    /// unreachable (not fenced) node: `attached-volumes` denies.
    AttachedVolumeForceDelete,
    /// `kubectl patch pod ... finalizers:null` on a terminating pod: allowed,
    /// recorded (once per UID), warned.
    FinalizerStrip,
    /// `PUT namespaces/<ns>/finalize` emptying `spec.finalizers` of a
    /// namespace that still holds objects: denied with counts.
    NamespaceFinalize,
    /// The kubelet's own grace-0 delete of a pod on its node: never gated.
    KubeletFinalDelete,
}

impl Scenario {
    pub const ALL: [Scenario; 5] = [
        Scenario::LeaderForceDelete,
        Scenario::AttachedVolumeForceDelete,
        Scenario::FinalizerStrip,
        Scenario::NamespaceFinalize,
        Scenario::KubeletFinalDelete,
    ];

    /// The four requests of the load mix.
    pub const LOAD_MIX: [Scenario; 4] = [
        Scenario::LeaderForceDelete,
        Scenario::AttachedVolumeForceDelete,
        Scenario::FinalizerStrip,
        Scenario::KubeletFinalDelete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::LeaderForceDelete => "force_delete_leader",
            Scenario::AttachedVolumeForceDelete => "force_delete_attached_volume",
            Scenario::FinalizerStrip => "finalizer_strip",
            Scenario::NamespaceFinalize => "namespace_finalize",
            Scenario::KubeletFinalDelete => "kubelet_final_delete",
        }
    }

    /// Shipped policies that must fire for the decision to be the real one
    /// (e.g. the leader is denied *as a leader*, not only for its node).
    pub fn must_fire(self) -> &'static [&'static str] {
        match self {
            Scenario::LeaderForceDelete => {
                &["node-alive", "statefulset-leader", "attached-volumes"]
            }
            Scenario::AttachedVolumeForceDelete => &["attached-volumes"],
            Scenario::FinalizerStrip => &["protected-finalizers"],
            Scenario::NamespaceFinalize => &["namespace-finalize"],
            Scenario::KubeletFinalDelete => &[],
        }
    }

    /// Whether the shipped policies allow it (checked before measuring, so
    /// a bench never times a request that went down the wrong path).
    pub fn expect_allowed(self) -> bool {
        matches!(
            self,
            Scenario::FinalizerStrip | Scenario::KubeletFinalDelete
        )
    }
}

/// Lease duration that outlives any benchmark: ten years.
const HELD_LEASE_SECONDS: i32 = 315_360_000;

/// A written snapshot is a still picture: its leader Leases, renewed 5 s
/// before the generator's fixed `now` for 15 s, would have expired long
/// before the run. Stretch them so the leader scenario is decided as a live
/// leader (facts and policies then do their full work); deterministic.
pub fn keep_leases_held(cluster: &mut SyntheticCluster) {
    for lease in &mut cluster.leases {
        if let Some(spec) = lease.spec.as_mut() {
            spec.lease_duration_seconds = Some(HELD_LEASE_SECONDS);
        }
    }
}

/// Node health as the generator made it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NodeState {
    Ready,
    /// NotReady/unreachable but not tainted out-of-service.
    Unreachable,
    Fenced,
}

/// Picks targets from a generated cluster.
pub struct Targets<'a> {
    cluster: &'a SyntheticCluster,
    nodes: HashMap<&'a str, NodeState>,
}

impl<'a> Targets<'a> {
    pub fn new(cluster: &'a SyntheticCluster) -> Self {
        let nodes = cluster
            .nodes
            .iter()
            .filter_map(|node| {
                let name = node.metadata.name.as_deref()?;
                let taints = node.spec.as_ref().and_then(|s| s.taints.as_deref());
                let taints = taints.unwrap_or_default();
                let state = if taints
                    .iter()
                    .any(|t| t.key == "node.kubernetes.io/out-of-service")
                {
                    NodeState::Fenced
                } else if taints.is_empty() {
                    NodeState::Ready
                } else {
                    NodeState::Unreachable
                };
                Some((name, state))
            })
            .collect();
        Self { cluster, nodes }
    }

    /// Up to `max` distinct requests of `scenario`, in a stable order.
    pub fn reviews(&self, scenario: Scenario, max: usize) -> Vec<Value> {
        let mut out = Vec::new();
        match scenario {
            Scenario::NamespaceFinalize => {
                for namespace in self.namespaces().take(max) {
                    out.push(namespace_finalize(namespace, out.len()));
                }
            }
            _ => {
                for pod in self.pods().filter(|pod| self.fits(scenario, pod)) {
                    if out.len() == max {
                        break;
                    }
                    out.push(pod_review(scenario, pod, out.len()));
                }
            }
        }
        out
    }

    fn pods(&self) -> impl Iterator<Item = &'a Pod> + 'a {
        self.cluster.pods.iter()
    }

    fn namespaces(&self) -> impl Iterator<Item = &'a Namespace> + 'a {
        self.cluster.namespaces.iter()
    }

    fn fits(&self, scenario: Scenario, pod: &Pod) -> bool {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let owner = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .map(|o| o.kind.as_str())
            .next()
            .unwrap_or_default();
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .and_then(|n| self.nodes.get(n).copied());
        let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        match scenario {
            Scenario::LeaderForceDelete => {
                owner == "StatefulSet" && name.ends_with("-0") && node == Some(NodeState::Ready)
            }
            Scenario::AttachedVolumeForceDelete => {
                owner == "StatefulSet"
                    && !name.ends_with("-0")
                    && node == Some(NodeState::Unreachable)
            }
            Scenario::FinalizerStrip => owner == "ReplicaSet" && running,
            Scenario::KubeletFinalDelete => running && node.is_some(),
            Scenario::NamespaceFinalize => false,
        }
    }
}

/// A stable, distinct request UID per scenario and position.
fn request_uid(scenario: Scenario, n: usize) -> String {
    let tag = Scenario::ALL
        .iter()
        .position(|s| *s == scenario)
        .unwrap_or_default();
    format!("b0000000-0000-4000-8{tag:03x}-{n:012x}")
}

fn pod_json(pod: &Pod) -> Value {
    let mut value = serde_json::to_value(pod).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("apiVersion".into(), json!("v1"));
        map.insert("kind".into(), json!("Pod"));
    }
    value
}

fn pod_resource() -> Value {
    json!({"group": "", "version": "v1", "resource": "pods"})
}

fn pod_kind() -> Value {
    json!({"group": "", "version": "v1", "kind": "Pod"})
}

fn human() -> Value {
    json!({
        "username": "alice@example.com",
        "uid": "8f1c9f55-6f7b-4b8e-9d55-7a1f2e3c4d5e",
        "groups": ["oncall", "system:authenticated"]
    })
}

fn review(request: Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": request,
    })
}

const DELETION_TIMESTAMP: &str = "2025-06-01T11:46:53Z";

fn pod_review(scenario: Scenario, pod: &Pod, n: usize) -> Value {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    let mut old = pod_json(pod);
    let request = match scenario {
        Scenario::LeaderForceDelete | Scenario::AttachedVolumeForceDelete => json!({
            "uid": request_uid(scenario, n),
            "kind": pod_kind(), "resource": pod_resource(),
            "requestKind": pod_kind(), "requestResource": pod_resource(),
            "name": name, "namespace": namespace, "operation": "DELETE",
            "userInfo": human(),
            "object": null, "oldObject": old, "dryRun": false,
            "options": {
                "kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                "gracePeriodSeconds": 0, "propagationPolicy": "Background"
            }
        }),
        Scenario::KubeletFinalDelete => {
            old["metadata"]["deletionTimestamp"] = json!(DELETION_TIMESTAMP);
            old["metadata"]["deletionGracePeriodSeconds"] = json!(30);
            json!({
                "uid": request_uid(scenario, n),
                "kind": pod_kind(), "resource": pod_resource(),
                "requestKind": pod_kind(), "requestResource": pod_resource(),
                "name": name, "namespace": namespace, "operation": "DELETE",
                "userInfo": {
                    "username": format!("system:node:{node}"),
                    "groups": ["system:nodes", "system:authenticated"]
                },
                "object": null, "oldObject": old, "dryRun": false,
                "options": {
                    "kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                    "gracePeriodSeconds": 0, "preconditions": {"uid": uid}
                }
            })
        }
        // (Namespaces are not pods: `Targets::reviews` builds those with
        // `namespace_finalize`, so only the strip reaches this arm.)
        Scenario::FinalizerStrip | Scenario::NamespaceFinalize => {
            old["metadata"]["deletionTimestamp"] = json!(DELETION_TIMESTAMP);
            old["metadata"]["deletionGracePeriodSeconds"] = json!(30);
            let mut new = old.clone();
            old["metadata"]["finalizers"] = json!(["example.com/drain-connections"]);
            new["metadata"]["resourceVersion"] = json!("2");
            json!({
                "uid": request_uid(scenario, n),
                "kind": pod_kind(), "resource": pod_resource(),
                "requestKind": pod_kind(), "requestResource": pod_resource(),
                "name": name, "namespace": namespace, "operation": "UPDATE",
                "userInfo": human(),
                "object": new, "oldObject": old, "dryRun": false,
                "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
            })
        }
    };
    review(request)
}

fn namespace_finalize(namespace: &Namespace, n: usize) -> Value {
    let name = namespace.metadata.name.clone().unwrap_or_default();
    let mut old = serde_json::to_value(namespace).unwrap_or(Value::Null);
    old["apiVersion"] = json!("v1");
    old["kind"] = json!("Namespace");
    old["metadata"]["deletionTimestamp"] = json!(DELETION_TIMESTAMP);
    old["status"] = json!({"phase": "Terminating"});
    let mut new = old.clone();
    old["spec"] = json!({"finalizers": ["kubernetes"]});
    new["spec"] = json!({"finalizers": []});
    let kind = json!({"group": "", "version": "v1", "kind": "Namespace"});
    let resource = json!({"group": "", "version": "v1", "resource": "namespaces"});
    review(json!({
        "uid": request_uid(Scenario::NamespaceFinalize, n),
        "kind": kind, "resource": resource, "subResource": "finalize",
        "requestKind": kind, "requestResource": resource, "requestSubResource": "finalize",
        "name": name, "namespace": name, "operation": "UPDATE",
        "userInfo": human(),
        "object": new, "oldObject": old, "dryRun": false,
        "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
    }))
}
