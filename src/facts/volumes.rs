//! Storage the pod (or a stripped PVC/PV) still holds: claim → PV →
//! VolumeAttachment, and where each attachment lives.
//!
//! An RWO disk attached on the pod's node while the pod is force-deleted can
//! end up attached twice once a replacement schedules elsewhere; attached on
//! another node usually means the move already happened.

use std::sync::Arc;

use k8s_openapi::api::core::v1 as k8s;

use super::request::request_object;
use super::{
    AttachmentFacts, ClaimFacts, ClaimVolume, Facts, PersistentVolumeFacts, PodFacts, VolumeFacts,
};
use crate::admission::Request;
use crate::cluster::record::{PersistentVolume, PersistentVolumeClaim, VolumeAttachment};
use crate::cluster::{ClusterView, Unknown};
use crate::intent::Intent;

pub(super) fn gather_for_pod(
    pod: &PodFacts,
    view: &dyn ClusterView,
) -> Result<VolumeFacts, Unknown> {
    let mut facts = VolumeFacts::default();
    for claim in &pod.claims {
        let pvc = view.pvc(&pod.namespace, claim)?;
        let volume_name = pvc
            .as_ref()
            .and_then(|c| c.volume_name.clone())
            .filter(|v| !v.is_empty());
        let pv = match &volume_name {
            Some(name) => view.pv(name)?,
            None => None,
        };
        let attachments = match &volume_name {
            Some(name) => describe_attachments(&view.volume_attachments_for_pv(name)?),
            None => Vec::new(),
        };
        let on_node = |elsewhere: bool| {
            attachments.iter().any(|a| {
                a.attached
                    && pod
                        .node_name
                        .as_deref()
                        .is_some_and(|n| (a.node == n) != elsewhere)
            })
        };
        let attached_on_pod_node = on_node(false);
        let attached_elsewhere = on_node(true);
        facts.attached_on_pod_node |= attached_on_pod_node;
        facts.attached_elsewhere |= attached_elsewhere;
        facts.claims.push(ClaimVolume {
            claim: claim.clone(),
            persistent_volume: volume_name,
            access_modes: access_modes(pv.as_deref(), pvc.as_deref()),
            attachments,
            attached_on_pod_node,
            attached_elsewhere,
        });
    }
    Ok(facts)
}

/// The PV's access modes (what the disk allows), else the claim's.
fn access_modes(pv: Option<&PersistentVolume>, pvc: Option<&PersistentVolumeClaim>) -> Vec<String> {
    pv.and_then(|v| v.access_modes.clone())
        .or_else(|| pvc.and_then(|c| c.access_modes.clone()))
        .unwrap_or_default()
}

fn describe_attachments(attachments: &[Arc<VolumeAttachment>]) -> Vec<AttachmentFacts> {
    attachments
        .iter()
        .map(|va| AttachmentFacts {
            name: va.meta.name.clone(),
            node: va.node_name.clone(),
            attached: va.attached,
        })
        .collect()
}

/// PVC finalizer removal: who still mounts the claim.
pub(super) fn gather_claim(
    facts: &mut Facts,
    intent: &Intent,
    request: &Request,
    view: &dyn ClusterView,
) {
    let namespace = intent.target.namespace.clone().unwrap_or_default();
    let name = intent.target.name.clone();
    let from_request: Option<k8s::PersistentVolumeClaim> =
        request_object(request.old_object.as_ref(), "PersistentVolumeClaim");
    let volume_name = match from_request {
        Some(pvc) => pvc.spec.and_then(|s| s.volume_name),
        None => view
            .pvc(&namespace, &name)
            .ok()
            .flatten()
            .and_then(|pvc| pvc.volume_name.clone()),
    }
    .filter(|v| !v.is_empty());
    match view.pods_using_claim(&namespace, &name) {
        Ok(pods) => {
            let used_by: Vec<String> = pods
                .iter()
                .filter(|p| !matches!(p.phase.as_deref(), Some("Succeeded" | "Failed")))
                .map(|p| p.meta.name.clone())
                .collect();
            facts.claim = Some(ClaimFacts {
                namespace,
                name,
                volume_name,
                in_use: !used_by.is_empty(),
                used_by,
            });
        }
        Err(why) => facts.unknown("claim", why),
    }
}

/// PV finalizer removal: is it still bound or attached?
pub(super) fn gather_volume(
    facts: &mut Facts,
    intent: &Intent,
    request: &Request,
    view: &dyn ClusterView,
) {
    let name = intent.target.name.clone();
    let from_request: Option<k8s::PersistentVolume> =
        request_object(request.old_object.as_ref(), "PersistentVolume");
    let pv = match from_request {
        Some(pv) => Some(Arc::new(PersistentVolume::from(pv))),
        None => match view.pv(&name) {
            Ok(pv) => pv,
            Err(why) => return facts.unknown("persistentVolume", why),
        },
    };
    let attachments = match view.volume_attachments_for_pv(&name) {
        Ok(attachments) => describe_attachments(&attachments),
        Err(why) => return facts.unknown("persistentVolume", why),
    };
    let phase = pv.as_ref().and_then(|v| v.phase.clone());
    let claim = pv.as_ref().and_then(|v| v.claim.clone());
    facts.persistent_volume = Some(PersistentVolumeFacts {
        name,
        bound: phase.as_deref() == Some("Bound"),
        phase,
        claim,
        attached: attachments.iter().any(|a| a.attached),
        attachments,
    });
}
