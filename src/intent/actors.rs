//! Who may finish what: the system components whose own deletes and
//! finalizer removals forcegate must never block.
//!
//! Identities are the usernames kube-controller-manager and the kubelet
//! authenticate as. With `--use-service-account-credentials` (the kubeadm
//! default) each controller has its own service account; without it they all
//! act as `system:kube-controller-manager` (the service controller as
//! `system:cloud-controller-manager`), which is accepted for the controllers
//! that process runs.

use super::{Requester, SystemActor};

/// The identity kube-controller-manager uses when controllers share it.
pub const KUBE_CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
/// The pod garbage collector's own service account.
pub const POD_GC: &str = "system:serviceaccount:kube-system:pod-garbage-collector";
/// The node lifecycle controller's own service account.
pub const NODE_LIFECYCLE: &str = "system:serviceaccount:kube-system:node-controller";
/// Kubelets authenticate as `system:node:<node>`…
pub const NODE_USER_PREFIX: &str = "system:node:";
/// …and carry this group.
pub const NODES_GROUP: &str = "system:nodes";

/// A controller that owns (adds and later removes) finalizers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalizerOwner {
    /// Controller name as its manager calls it.
    pub controller: &'static str,
    /// Identities it acts as: its own service account first, then the
    /// shared identity of the process that runs it.
    pub users: &'static [&'static str],
    /// Finalizers it owns.
    pub finalizers: &'static [&'static str],
}

/// Controllers that remove `metadata.finalizers` they own.
pub const METADATA_FINALIZER_OWNERS: &[FinalizerOwner] = &[
    FinalizerOwner {
        controller: "job-controller",
        users: &[
            "system:serviceaccount:kube-system:job-controller",
            KUBE_CONTROLLER_MANAGER,
        ],
        finalizers: &["batch.kubernetes.io/job-tracking"],
    },
    FinalizerOwner {
        controller: "generic-garbage-collector",
        users: &[
            "system:serviceaccount:kube-system:generic-garbage-collector",
            KUBE_CONTROLLER_MANAGER,
        ],
        finalizers: &["orphan", "foregroundDeletion"],
    },
    FinalizerOwner {
        controller: "pvc-protection-controller",
        users: &[
            "system:serviceaccount:kube-system:pvc-protection-controller",
            KUBE_CONTROLLER_MANAGER,
        ],
        finalizers: &["kubernetes.io/pvc-protection"],
    },
    FinalizerOwner {
        controller: "pv-protection-controller",
        users: &[
            "system:serviceaccount:kube-system:pv-protection-controller",
            KUBE_CONTROLLER_MANAGER,
        ],
        finalizers: &["kubernetes.io/pv-protection"],
    },
    FinalizerOwner {
        controller: "persistent-volume-binder",
        users: &[
            "system:serviceaccount:kube-system:persistent-volume-binder",
            KUBE_CONTROLLER_MANAGER,
        ],
        finalizers: &["kubernetes.io/pv-controller"],
    },
    FinalizerOwner {
        controller: "service-controller",
        users: &[
            "system:serviceaccount:kube-system:service-controller",
            "system:cloud-controller-manager",
        ],
        finalizers: &["service.kubernetes.io/load-balancer-cleanup"],
    },
    // The API server itself removes it once a deleted CRD's objects are gone.
    FinalizerOwner {
        controller: "apiextensions-apiserver",
        users: &["system:apiserver"],
        finalizers: &["customresourcecleanup.apiextensions.k8s.io"],
    },
];

/// The namespace controller owns the `kubernetes` entry of a namespace's
/// `spec.finalizers` and removes it through `namespaces/finalize` once the
/// namespace is empty.
pub const NAMESPACE_SPEC_FINALIZER_OWNER: FinalizerOwner = FinalizerOwner {
    controller: "namespace-controller",
    users: &[
        "system:serviceaccount:kube-system:namespace-controller",
        KUBE_CONTROLLER_MANAGER,
    ],
    finalizers: &["kubernetes"],
};

/// The owner of a `metadata.finalizers` entry, if Kubernetes itself owns it.
pub fn metadata_finalizer_owner(finalizer: &str) -> Option<&'static FinalizerOwner> {
    METADATA_FINALIZER_OWNERS
        .iter()
        .find(|owner| owner.finalizers.contains(&finalizer))
}

/// The node a kubelet speaks for, when the requester is a kubelet.
pub fn kubelet_node(requester: &Requester) -> Option<&str> {
    let node = requester.username.strip_prefix(NODE_USER_PREFIX)?;
    let in_group = requester.groups.iter().any(|g| g == NODES_GROUP);
    (in_group && !node.is_empty()).then_some(node)
}

/// A system actor finishing the grace-0 delete of a pod bound to `pod_node`.
///
/// Only the kubelet of the pod's own node qualifies: a kubelet deleting
/// another node's pod is exactly what a force delete looks like.
pub fn pod_finalizer(requester: &Requester, pod_node: Option<&str>) -> Option<SystemActor> {
    if let Some(node) = kubelet_node(requester) {
        return (pod_node == Some(node)).then(|| SystemActor::Kubelet {
            node: node.to_owned(),
        });
    }
    POD_DELETERS
        .contains(&requester.username.as_str())
        .then_some(SystemActor::PodGc)
}

/// Identities besides the pod's own kubelet that may force-delete a pod.
pub const POD_DELETERS: &[&str] = &[POD_GC, KUBE_CONTROLLER_MANAGER];

/// Identities besides the pod's own kubelet that may mark a scheduled pod
/// Succeeded/Failed through `pods/status`: the pod GC marks orphaned pods
/// and pods on out-of-service nodes Failed before deleting them.
pub const POD_STATUS_FINISHERS: &[&str] = &[POD_GC, KUBE_CONTROLLER_MANAGER, NODE_LIFECYCLE];

/// A system actor moving a pod bound to `pod_node` to a terminal phase:
/// its own kubelet, or one of [`POD_STATUS_FINISHERS`].
pub fn pod_status_finisher(requester: &Requester, pod_node: Option<&str>) -> Option<SystemActor> {
    if let Some(node) = kubelet_node(requester) {
        return (pod_node == Some(node)).then(|| SystemActor::Kubelet {
            node: node.to_owned(),
        });
    }
    match requester.username.as_str() {
        NODE_LIFECYCLE => Some(SystemActor::Controller {
            name: "node-lifecycle-controller".to_owned(),
        }),
        user if POD_STATUS_FINISHERS.contains(&user) => Some(SystemActor::PodGc),
        _ => None,
    }
}

/// The controller removing `removed` when it owns every one of them.
pub fn owning_controller(
    requester: &Requester,
    removed: &[String],
    owners: &[FinalizerOwner],
) -> Option<SystemActor> {
    if removed.is_empty() {
        return None;
    }
    let user = requester.username.as_str();
    let mut controllers = Vec::new();
    for finalizer in removed {
        let owner = owners
            .iter()
            .find(|o| o.users.contains(&user) && o.finalizers.contains(&finalizer.as_str()))?;
        if !controllers.contains(&owner.controller) {
            controllers.push(owner.controller);
        }
    }
    // The shared identity acting for several controllers is named as itself.
    let name = match controllers.as_slice() {
        [single] if user != KUBE_CONTROLLER_MANAGER => *single,
        _ => user.strip_prefix("system:").unwrap_or(user),
    };
    Some(SystemActor::Controller {
        name: name.to_owned(),
    })
}
