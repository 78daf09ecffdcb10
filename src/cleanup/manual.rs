//! Steps the API cannot show: what may live on in the node after a force
//! deletion, and the commands an operator runs there to check and clean it.

use super::crd::{ChecklistItem, ForceDeletionSpec, ItemState, ObjectReference};

/// Where the kubelet keeps per-pod volume mounts.
const KUBELET_PODS: &str = "/var/lib/kubelet/pods";
/// host-local IPAM's allocation files (one per IP), the default of most CNIs.
const HOST_LOCAL_IPAM: &str = "/var/lib/cni/networks";

fn manual(name: &str, message: String, command: String) -> ChecklistItem {
    ChecklistItem {
        name: name.to_string(),
        state: ItemState::Manual,
        message,
        command: Some(command),
    }
}

/// Sandbox, mounts, veth and IPAM of a force-deleted pod, on its node.
pub(super) fn node_steps(spec: &ForceDeletionSpec) -> Vec<ChecklistItem> {
    let (Some(node), Some(uid)) = (spec.node.as_deref(), spec.object.uid.as_deref()) else {
        return Vec::new();
    };
    let on = format!("on node {node}");
    let mut items = vec![
        manual(
            "node/sandbox",
            format!(
                "{on}: a listed pod sandbox means the old containers may still run; remove it with `crictl stopp <id> && crictl rmp <id>`"
            ),
            format!("crictl pods --label io.kubernetes.pod.uid={uid} -q"),
        ),
        manual(
            "node/mounts",
            format!(
                "{on}: unmount each listed target with `umount <target>`, then remove {KUBELET_PODS}/{uid}"
            ),
            format!("findmnt -rn -o TARGET | grep {uid}"),
        ),
    ];
    if spec.pod_ips.is_empty() {
        items.push(manual(
            "node/veth",
            format!(
                "{on}: the pod's IP was not known; look for a host-side veth without a running sandbox and delete it with `ip link delete <dev>`"
            ),
            "ip -o link show type veth".to_string(),
        ));
    }
    for ip in &spec.pod_ips {
        let suffix = if spec.pod_ips.len() > 1 {
            format!("/{ip}")
        } else {
            String::new()
        };
        items.push(manual(
            &format!("node/veth{suffix}"),
            format!(
                "{on}: if a route to {ip} remains, delete its host-side veth with `ip link delete <dev>`"
            ),
            format!("ip route show | grep -w {ip}"),
        ));
        items.push(manual(
            &format!("node/ipam{suffix}"),
            format!(
                "{on}: release {ip} in IPAM. host-local: remove the listed file; Calico: `calicoctl ipam release --ip={ip}`; other CNIs: release it with the CNI's IPAM tool"
            ),
            format!("grep -rlw {ip} {HOST_LOCAL_IPAM}/"),
        ));
    }
    items
}

/// Finalizers removed by the request: the cleanup each stood for was skipped.
pub(super) fn skipped_finalizers(spec: &ForceDeletionSpec) -> Vec<ChecklistItem> {
    spec.action
        .removed_finalizers
        .iter()
        .map(|finalizer| ChecklistItem {
            name: format!("finalizer-skipped/{finalizer}"),
            state: ItemState::Manual,
            message: format!(
                "{finalizer} was removed from {}, so its controller's cleanup did not run: {}",
                spec.subject,
                finalizer_hint(finalizer)
            ),
            command: None,
        })
        .collect()
}

fn finalizer_hint(finalizer: &str) -> &'static str {
    match finalizer {
        "kubernetes" => "check that no objects of the namespace remain in aggregated APIs or CRDs",
        "kubernetes.io/pvc-protection" => {
            "check that no pod still mounts the claim's volume on a node"
        }
        "kubernetes.io/pv-protection" | "external-attacher/csi" => {
            "check that the disk is detached and released in the storage backend"
        }
        "batch.kubernetes.io/job-tracking" => {
            "check the Job's succeeded/failed counts; the pod may be counted twice or not at all"
        }
        "foregroundDeletion" => "check that the object's dependents were deleted",
        "orphan" => "check that the dependents were orphaned (their ownerReferences removed)",
        _ => {
            "check the external resources its controller manages (cloud disks, DNS records, buckets, load balancers)"
        }
    }
}

/// `kubectl get` printing the UID, for kinds forcegate does not watch.
pub(super) fn kubectl_get_uid(object: &ObjectReference) -> String {
    let resource = if object.group.is_empty() {
        object.resource.clone()
    } else {
        format!("{}.{}", object.resource, object.group)
    };
    let namespace = object
        .namespace
        .as_deref()
        .map(|ns| format!(" -n {ns}"))
        .unwrap_or_default();
    format!(
        "kubectl get {resource} {}{namespace} -o jsonpath='{{.metadata.uid}}'",
        object.name
    )
}
