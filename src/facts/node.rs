//! Is the pod's node alive, unreachable, or fenced?
//!
//! "Fenced" means its workloads can no longer be running: the Node object is
//! gone (the cloud deleted the VM) or an admin tainted it
//! `node.kubernetes.io/out-of-service`. Unreachable is *not* fenced: the
//! kubelet may be cut off while its containers keep writing.

use k8s_openapi::jiff::Timestamp;

use super::{NodeFacts, seconds_since};
use crate::cluster::{ClusterView, Unknown};

pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";

pub(super) fn gather(
    name: &str,
    view: &dyn ClusterView,
    now: Timestamp,
) -> Result<NodeFacts, Unknown> {
    let Some(node) = view.node(name)? else {
        return Ok(NodeFacts {
            name: name.to_owned(),
            exists: false,
            fenced: true,
            ..NodeFacts::default()
        });
    };
    let ready = node.ready.as_ref();
    let taints = node.taints.clone();
    let out_of_service = taints.iter().any(|t| t == OUT_OF_SERVICE_TAINT);
    Ok(NodeFacts {
        name: name.to_owned(),
        exists: true,
        ready: ready.is_some_and(|c| c.status == "True"),
        heartbeat_age_seconds: ready
            .and_then(|c| c.last_heartbeat)
            .map(|t| seconds_since(t, now)),
        unreachable: taints.iter().any(|t| t == UNREACHABLE_TAINT),
        out_of_service,
        fenced: out_of_service,
        ready_status: ready.map(|c| c.status.clone()),
        taints,
    })
}
