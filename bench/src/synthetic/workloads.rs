//! Workload generators: StatefulSets with storage and leases, Deployments,
//! CronJob-owned Jobs, and the EndpointSlices in front of them.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::batch::v1::{
    CronJob, CronJobSpec, Job, JobCondition, JobStatus, JobTemplateSpec,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, ObjectReference, PersistentVolume, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, PersistentVolumeSpec, Pod, PodIP,
    PodSpec, PodStatus, Volume, VolumeMount,
};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointSlice};
use k8s_openapi::api::storage::v1::{
    VolumeAttachment, VolumeAttachmentSource, VolumeAttachmentSpec, VolumeAttachmentStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;

use super::{SyntheticCluster, SyntheticSpec};

/// SplitMix64: tiny, deterministic, good enough to spread placement.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(super) fn uid(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            (b >> 48) & 0xfff,
            b & 0xffff_ffff_ffff
        )
    }
}

pub(super) fn meta(namespace: &str, name: &str, uid: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        uid: Some(uid),
        resource_version: Some("1".to_owned()),
        ..ObjectMeta::default()
    }
}

fn owned_by(kind: &str, api_version: &str, name: &str, uid: &str) -> Option<Vec<OwnerReference>> {
    Some(vec![OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
        uid: uid.to_owned(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }])
}

pub(super) fn time(at: Timestamp, seconds_before: i64) -> Time {
    Time(Timestamp::from_second(at.as_second() - seconds_before).unwrap_or(at))
}

pub(super) struct Generator {
    pub(super) spec: SyntheticSpec,
    pub(super) rng: Rng,
    pub(super) out: SyntheticCluster,
    pub(super) node_names: Vec<String>,
    pub(super) ip_counter: u32,
}

impl Generator {
    fn node_for(&mut self) -> String {
        let i = self.rng.below(self.node_names.len());
        self.node_names[i].clone()
    }

    fn ip(&mut self) -> String {
        self.ip_counter += 1;
        let n = self.ip_counter;
        format!(
            "10.{}.{}.{}",
            64 + (n >> 16) % 64,
            (n >> 8) & 0xff,
            n & 0xff
        )
    }

    /// A pod as the API server stores it (full spec; the index keeps its record).
    fn pod(
        &mut self,
        namespace: &str,
        name: &str,
        owner: Option<Vec<OwnerReference>>,
        claim: Option<&str>,
        app: &str,
    ) -> (Pod, String) {
        let node = self.node_for();
        let ip = self.ip();
        let uid = self.rng.uid();
        let mut volumes = vec![Volume {
            name: "kube-api-access".to_owned(),
            projected: Some(Default::default()),
            ..Volume::default()
        }];
        if let Some(claim) = claim {
            volumes.push(Volume {
                name: "data".to_owned(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.to_owned(),
                    read_only: None,
                }),
                ..Volume::default()
            });
        }
        let mut metadata = meta(namespace, name, uid);
        metadata.owner_references = owner;
        metadata.labels = Some(BTreeMap::from([(
            "app.kubernetes.io/name".to_owned(),
            app.to_owned(),
        )]));
        let pod = Pod {
            metadata,
            spec: Some(PodSpec {
                node_name: Some(node),
                containers: vec![Container {
                    name: app.to_owned(),
                    image: Some(format!("registry.example.com/{app}:1.0.0")),
                    env: Some(
                        (0..8)
                            .map(|i| EnvVar {
                                name: format!("SETTING_{i}"),
                                value: Some(format!("value-{i}")),
                                ..EnvVar::default()
                            })
                            .collect(),
                    ),
                    ports: Some(vec![ContainerPort {
                        container_port: 8080,
                        name: Some("http".to_owned()),
                        ..ContainerPort::default()
                    }]),
                    volume_mounts: Some(vec![VolumeMount {
                        name: "kube-api-access".to_owned(),
                        mount_path: "/var/run/secrets/kubernetes.io/serviceaccount".to_owned(),
                        ..VolumeMount::default()
                    }]),
                    ..Container::default()
                }],
                volumes: Some(volumes),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some("Running".to_owned()),
                pod_ip: Some(ip.clone()),
                pod_ips: Some(vec![PodIP { ip: ip.clone() }]),
                start_time: Some(time(self.spec.now, 86_400)),
                ..PodStatus::default()
            }),
        };
        (pod, ip)
    }

    fn slice(&mut self, namespace: &str, service: &str, pods: &[(String, String, String)]) {
        let endpoints = pods
            .iter()
            .map(|(name, uid, ip)| Endpoint {
                addresses: vec![ip.clone()],
                target_ref: Some(ObjectReference {
                    kind: Some("Pod".to_owned()),
                    name: Some(name.clone()),
                    namespace: Some(namespace.to_owned()),
                    uid: Some(uid.clone()),
                    ..ObjectReference::default()
                }),
                ..Endpoint::default()
            })
            .collect();
        let uid = self.rng.uid();
        self.out.slices.push(EndpointSlice {
            metadata: meta(namespace, &format!("{service}-{}", &uid[..5]), uid),
            address_type: "IPv4".to_owned(),
            endpoints: Some(endpoints),
            ports: None,
        });
    }

    pub(super) fn stateful_set(&mut self, namespace: &str, name: &str) {
        let set_uid = self.rng.uid();
        self.out.stateful_sets.push(StatefulSet {
            metadata: meta(namespace, name, set_uid.clone()),
            spec: Some(StatefulSetSpec {
                replicas: Some(3),
                service_name: Some(name.to_owned()),
                ..StatefulSetSpec::default()
            }),
            status: None,
        });
        let mut members = Vec::new();
        for ordinal in 0..3 {
            let pod_name = format!("{name}-{ordinal}");
            let claim = format!("data-{pod_name}");
            let (pod, ip) = self.pod(
                namespace,
                &pod_name,
                owned_by("StatefulSet", "apps/v1", name, &set_uid),
                Some(&claim),
                name,
            );
            let node = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .unwrap_or_default();
            let pod_uid = pod.metadata.uid.clone().unwrap_or_default();
            members.push((pod_name.clone(), pod_uid, ip));
            self.out.pods.push(pod);
            self.volume(namespace, &claim, &node);
            if ordinal == 0 {
                let holder = format!("{pod_name}_{}", self.rng.uid());
                let lease_uid = self.rng.uid();
                self.out.leases.push(Lease {
                    metadata: meta(namespace, &format!("{name}-leader"), lease_uid),
                    spec: Some(LeaseSpec {
                        holder_identity: Some(holder),
                        lease_duration_seconds: Some(15),
                        renew_time: Some(MicroTime(
                            Timestamp::from_second(self.spec.now.as_second() - 5)
                                .unwrap_or(self.spec.now),
                        )),
                        ..LeaseSpec::default()
                    }),
                });
            }
        }
        self.slice(namespace, name, &members);
    }

    fn volume(&mut self, namespace: &str, claim: &str, node: &str) {
        let pv_uid = self.rng.uid();
        let pv_name = format!("pvc-{}", self.rng.uid());
        self.out.claims.push(PersistentVolumeClaim {
            metadata: meta(namespace, claim, self.rng.uid()),
            spec: Some(PersistentVolumeClaimSpec {
                access_modes: Some(vec!["ReadWriteOnce".to_owned()]),
                volume_name: Some(pv_name.clone()),
                ..PersistentVolumeClaimSpec::default()
            }),
            status: None,
        });
        self.out.volumes.push(PersistentVolume {
            metadata: meta("", &pv_name, pv_uid),
            spec: Some(PersistentVolumeSpec {
                access_modes: Some(vec!["ReadWriteOnce".to_owned()]),
                ..PersistentVolumeSpec::default()
            }),
            status: Some(k8s_openapi::api::core::v1::PersistentVolumeStatus {
                phase: Some("Bound".to_owned()),
                ..Default::default()
            }),
        });
        let va_uid = self.rng.uid();
        self.out.attachments.push(VolumeAttachment {
            metadata: meta("", &format!("csi-{}", va_uid.replace('-', "")), va_uid),
            spec: VolumeAttachmentSpec {
                attacher: "ebs.csi.aws.com".to_owned(),
                node_name: node.to_owned(),
                source: VolumeAttachmentSource {
                    persistent_volume_name: Some(pv_name),
                    ..VolumeAttachmentSource::default()
                },
            },
            status: Some(VolumeAttachmentStatus {
                attached: true,
                ..VolumeAttachmentStatus::default()
            }),
        });
    }

    pub(super) fn deployment(&mut self, namespace: &str, name: &str, replicas: usize) {
        let dep_uid = self.rng.uid();
        let rs_uid = self.rng.uid();
        let hash = format!("{:x}", self.rng.next() & 0xff_ffff_ffff);
        let rs_name = format!("{name}-{hash}");
        self.out.deployments.push(Deployment {
            metadata: meta(namespace, name, dep_uid.clone()),
            ..Deployment::default()
        });
        let mut rs_meta = meta(namespace, &rs_name, rs_uid.clone());
        rs_meta.owner_references = owned_by("Deployment", "apps/v1", name, &dep_uid);
        self.out.replica_sets.push(ReplicaSet {
            metadata: rs_meta,
            ..ReplicaSet::default()
        });
        let mut members = Vec::new();
        for _ in 0..replicas {
            let suffix = format!("{:05x}", self.rng.next() & 0xfffff);
            let pod_name = format!("{rs_name}-{suffix}");
            let (pod, ip) = self.pod(
                namespace,
                &pod_name,
                owned_by("ReplicaSet", "apps/v1", &rs_name, &rs_uid),
                None,
                name,
            );
            members.push((pod_name, pod.metadata.uid.clone().unwrap_or_default(), ip));
            self.out.pods.push(pod);
        }
        self.slice(namespace, name, &members);
    }

    pub(super) fn cron_job(&mut self, namespace: &str, name: &str, jobs: usize) {
        let cron_uid = self.rng.uid();
        self.out.cron_jobs.push(CronJob {
            metadata: meta(namespace, name, cron_uid.clone()),
            spec: CronJobSpec {
                schedule: "*/5 * * * *".to_owned(),
                concurrency_policy: Some("Forbid".to_owned()),
                job_template: JobTemplateSpec::default(),
                ..CronJobSpec::default()
            },
            status: None,
        });
        for n in 0..jobs {
            let job_name = format!("{name}-{}", 29_146_000 + n);
            let job_uid = self.rng.uid();
            let finished = n % 2 == 1;
            let mut job_meta = meta(namespace, &job_name, job_uid.clone());
            job_meta.owner_references = owned_by("CronJob", "batch/v1", name, &cron_uid);
            self.out.jobs.push(Job {
                metadata: job_meta,
                spec: None,
                status: Some(JobStatus {
                    active: Some(i32::from(!finished)),
                    succeeded: Some(i32::from(finished)),
                    conditions: finished.then(|| {
                        vec![JobCondition {
                            type_: "Complete".to_owned(),
                            status: "True".to_owned(),
                            ..JobCondition::default()
                        }]
                    }),
                    ..JobStatus::default()
                }),
            });
            let suffix = format!("{:05x}", self.rng.next() & 0xfffff);
            let (mut pod, _) = self.pod(
                namespace,
                &format!("{job_name}-{suffix}"),
                owned_by("Job", "batch/v1", &job_name, &job_uid),
                None,
                name,
            );
            if finished {
                if let Some(status) = pod.status.as_mut() {
                    status.phase = Some("Succeeded".to_owned());
                }
            } else {
                pod.metadata.finalizers = Some(vec!["batch.kubernetes.io/job-tracking".to_owned()]);
            }
            self.out.pods.push(pod);
        }
    }
}
