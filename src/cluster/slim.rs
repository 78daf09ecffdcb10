//! Dropping what no fact reads, so a 100k-pod cache stays small.
//!
//! Kept: identity (metadata minus `managedFields` and the last-applied
//! annotation), ownership, finalizers, deletion state, and the spec/status
//! fields facts and cleanup records read (node, claim volumes, IPs, phases).
//! Dropped: pod templates, containers and their statuses, env, probes, node
//! image lists and the like. k8s-openapi structs are large even when empty
//! (a `Container` is ~2 KiB, a `Volume` ~3 KiB inline), so dropping whole
//! elements matters more than clearing their fields.
//!
//! A slimmed pod has an empty `spec.containers`: it describes what facts
//! need, and is never written back to the API server.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    EphemeralVolumeSource, Node, PersistentVolumeClaim, Pod, PodSpec, PodStatus, PodTemplateSpec,
    Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Written by `kubectl apply`; a full copy of the object, never read.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The legacy leader-election record on Endpoints and ConfigMaps.
pub const LEGACY_LEADER: &str = "control-plane.alpha.kubernetes.io/leader";

pub fn meta(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            meta.annotations = None;
        }
    }
}

/// Kinds whose every field may matter lose only the metadata noise.
pub fn with_meta<T: k8s_openapi::Metadata<Ty = ObjectMeta>>(mut object: T) -> T {
    meta(object.metadata_mut());
    object
}

/// Metadata-only kinds keep identity and the leader annotation, nothing else.
pub fn metadata_only(meta: ObjectMeta) -> ObjectMeta {
    let leader = meta
        .annotations
        .and_then(|mut a| a.remove(LEGACY_LEADER))
        .map(|record| [(LEGACY_LEADER.to_owned(), record)].into_iter().collect());
    ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        annotations: leader,
        ..ObjectMeta::default()
    }
}

pub fn pod(mut pod: Pod) -> Pod {
    meta(&mut pod.metadata);
    pod.spec = pod.spec.map(pod_spec);
    pod.status = pod.status.map(pod_status);
    pod
}

fn pod_spec(spec: PodSpec) -> PodSpec {
    PodSpec {
        node_name: spec.node_name,
        volumes: spec.volumes.map(claim_volumes).filter(|v| !v.is_empty()),
        hostname: spec.hostname,
        subdomain: spec.subdomain,
        host_network: spec.host_network,
        restart_policy: spec.restart_policy,
        service_account_name: spec.service_account_name,
        priority_class_name: spec.priority_class_name,
        termination_grace_period_seconds: spec.termination_grace_period_seconds,
        ..PodSpec::default()
    }
}

/// Only volumes backed by a claim matter (PVC → PV → VolumeAttachment);
/// projected token, ConfigMap and Secret volumes are on every pod and unused.
fn claim_volumes(volumes: Vec<Volume>) -> Vec<Volume> {
    volumes
        .into_iter()
        .filter_map(|v| {
            if v.persistent_volume_claim.is_some() {
                Some(Volume {
                    name: v.name,
                    persistent_volume_claim: v.persistent_volume_claim,
                    ..Volume::default()
                })
            } else if v.ephemeral.is_some() {
                // The claim is named `<pod>-<volume>`; its template is not needed.
                Some(Volume {
                    name: v.name,
                    ephemeral: Some(EphemeralVolumeSource::default()),
                    ..Volume::default()
                })
            } else {
                None
            }
        })
        .collect()
}

fn pod_status(status: PodStatus) -> PodStatus {
    PodStatus {
        phase: status.phase,
        reason: status.reason,
        pod_ip: status.pod_ip,
        pod_ips: status.pod_ips,
        host_ip: status.host_ip,
        start_time: status.start_time,
        ..PodStatus::default()
    }
}

/// Node image lists alone are often tens of KiB per node.
pub fn node(mut node: Node) -> Node {
    meta(&mut node.metadata);
    if let Some(status) = node.status.as_mut() {
        status.images = None;
        status.config = None;
        status.runtime_handlers = None;
        status.features = None;
        status.declared_features = None;
    }
    node
}

pub fn job(mut job: Job) -> Job {
    meta(&mut job.metadata);
    if let Some(spec) = job.spec.as_mut() {
        spec.template = PodTemplateSpec::default();
        spec.pod_failure_policy = None;
        spec.success_policy = None;
    }
    job
}

pub fn cron_job(mut cron: CronJob) -> CronJob {
    meta(&mut cron.metadata);
    cron.spec.job_template.spec = None;
    cron
}

pub fn stateful_set(mut set: StatefulSet) -> StatefulSet {
    meta(&mut set.metadata);
    if let Some(spec) = set.spec.as_mut() {
        spec.template = PodTemplateSpec::default();
        spec.volume_claim_templates = spec.volume_claim_templates.take().map(|templates| {
            templates
                .into_iter()
                .map(|t| PersistentVolumeClaim {
                    metadata: ObjectMeta {
                        name: t.metadata.name,
                        ..ObjectMeta::default()
                    },
                    ..PersistentVolumeClaim::default()
                })
                .collect()
        });
    }
    set
}

pub fn replica_set(mut set: ReplicaSet) -> ReplicaSet {
    meta(&mut set.metadata);
    if let Some(spec) = set.spec.as_mut() {
        spec.template = None;
    }
    set
}

pub fn deployment(mut deployment: Deployment) -> Deployment {
    meta(&mut deployment.metadata);
    if let Some(spec) = deployment.spec.as_mut() {
        spec.template = PodTemplateSpec::default();
    }
    deployment
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        Container, ContainerStatus, PersistentVolumeClaimVolumeSource, ProjectedVolumeSource,
    };

    #[test]
    fn pod_keeps_claims_node_and_addresses_only() {
        let full = Pod {
            metadata: ObjectMeta {
                name: Some("db-0".into()),
                annotations: Some(
                    [(LAST_APPLIED.to_owned(), "{}".to_owned())]
                        .into_iter()
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                node_name: Some("node-a".into()),
                containers: vec![Container {
                    name: "db".into(),
                    image: Some("postgres:16".into()),
                    command: Some(vec!["postgres".into()]),
                    ..Container::default()
                }],
                volumes: Some(vec![
                    Volume {
                        name: "data".into(),
                        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                            claim_name: "data-db-0".into(),
                            read_only: None,
                        }),
                        ..Volume::default()
                    },
                    Volume {
                        name: "kube-api-access".into(),
                        projected: Some(ProjectedVolumeSource::default()),
                        ..Volume::default()
                    },
                ]),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                pod_ip: Some("10.244.1.7".into()),
                container_statuses: Some(vec![ContainerStatus {
                    name: "db".into(),
                    container_id: Some("containerd://abc".into()),
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
        };
        let slim = pod(full);
        assert!(slim.metadata.annotations.is_none());
        let spec = slim.spec.expect("spec");
        assert_eq!(spec.node_name.as_deref(), Some("node-a"));
        let volumes = spec.volumes.expect("claim volume kept");
        assert_eq!(volumes.len(), 1);
        assert_eq!(volumes[0].name, "data");
        assert!(spec.containers.is_empty());
        let status = slim.status.expect("status");
        assert_eq!(status.pod_ip.as_deref(), Some("10.244.1.7"));
        assert!(status.container_statuses.is_none());
    }

    #[test]
    fn metadata_only_keeps_the_leader_record() {
        let meta = ObjectMeta {
            name: Some("kube-scheduler".into()),
            labels: Some([("a".to_owned(), "b".to_owned())].into_iter().collect()),
            annotations: Some(
                [
                    (
                        LEGACY_LEADER.to_owned(),
                        "{\"holderIdentity\":\"x\"}".to_owned(),
                    ),
                    ("other".to_owned(), "y".to_owned()),
                ]
                .into_iter()
                .collect(),
            ),
            ..ObjectMeta::default()
        };
        let slim = metadata_only(meta);
        assert!(slim.labels.is_none());
        let annotations = slim.annotations.expect("leader kept");
        assert_eq!(annotations.len(), 1);
        assert!(annotations.contains_key(LEGACY_LEADER));
    }
}
