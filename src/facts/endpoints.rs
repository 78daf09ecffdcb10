//! EndpointSlices still sending traffic to the pod after it is gone.
//!
//! A slice references the pod when an endpoint targets its UID, or lists one
//! of its IPs without naming a *different* pod (IPs are reused quickly; a
//! slice pointing the same IP at a new pod is not a leftover).

use super::{EndpointFacts, PodFacts};
use crate::cluster::record::{Endpoint, EndpointSlice};
use crate::cluster::{ClusterView, Unknown};

pub(super) fn gather(pod: &PodFacts, view: &dyn ClusterView) -> Result<EndpointFacts, Unknown> {
    let mut candidates = view.endpoint_slices_for_pod(&pod.uid, None)?;
    for ip in &pod.pod_ips {
        candidates.extend(view.endpoint_slices_for_pod(&pod.uid, Some(ip))?);
    }
    let mut slices: Vec<String> = candidates
        .iter()
        .filter(|slice| references(slice, pod))
        .map(|slice| format!("{}/{}", slice.meta.namespace, slice.meta.name))
        .collect();
    slices.sort();
    slices.dedup();
    Ok(EndpointFacts {
        referenced: !slices.is_empty(),
        slices,
    })
}

fn references(slice: &EndpointSlice, pod: &PodFacts) -> bool {
    slice.endpoints.iter().any(|e| endpoint_references(e, pod))
}

fn endpoint_references(endpoint: &Endpoint, pod: &PodFacts) -> bool {
    let target = endpoint.target.as_ref();
    let target_uid = target
        .and_then(|t| t.uid.as_deref())
        .filter(|u| !u.is_empty());
    if !pod.uid.is_empty() && target_uid == Some(pod.uid.as_str()) {
        return true;
    }
    let shares_ip = endpoint.addresses.iter().any(|a| pod.pod_ips.contains(a));
    let names_other_pod = match target {
        None => false,
        Some(t) => match target_uid {
            Some(uid) if !pod.uid.is_empty() => uid != pod.uid,
            _ => t.name.as_deref().is_some_and(|n| n != pod.name),
        },
    };
    shares_ip && !names_other_pod
}
