//! Deterministic synthetic clusters for benchmarks, load tests and RSS
//! measurements: the same spec always yields the same objects.
//!
//! Per namespace of 200 pods: StatefulSets (3 replicas, one PVC → PV →
//! VolumeAttachment each, a leader Lease held by `<set>-0_<uuid>`),
//! Deployments (ReplicaSet, 5 replicas), CronJob-owned Jobs (one pod each,
//! every other Job finished) and one EndpointSlice per workload. Nodes host
//! ~30 pods; every 10th node is unreachable and every 25th out-of-service.

mod workloads;
mod write;

use forcegate::cluster::{Kind, Object, SnapshotCluster};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    Namespace, NamespaceStatus, Node, NodeCondition, NodeSpec, NodeStatus, PersistentVolume,
    PersistentVolumeClaim, Pod, Taint,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::jiff::Timestamp;

use self::workloads::{Generator, Rng, meta, time};
pub use self::write::{Format, write_snapshot};

const PODS_PER_NAMESPACE: usize = 200;
const PODS_PER_NODE: usize = 30;

/// What to generate.
#[derive(Clone, Debug)]
pub struct SyntheticSpec {
    pub pods: usize,
    /// Varies names/UIDs and placement; same seed, same cluster.
    pub seed: u64,
    /// "Now" of the generated cluster: heartbeats and lease renewals are
    /// relative to it (leases are renewed 5s before it, for 15s).
    pub now: Timestamp,
}

impl SyntheticSpec {
    pub fn with_pods(pods: usize) -> Self {
        Self {
            pods,
            seed: 1,
            now: Timestamp::from_second(1_748_779_230).unwrap_or(Timestamp::UNIX_EPOCH),
        }
    }
}

/// A generated cluster plus a few well-known objects to look up.
///
/// Objects are kept as the API server would store them (full k8s-openapi
/// structs, per kind): snapshot files and AdmissionReview bodies are made
/// from them. [`SyntheticCluster::objects`] gives their index records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyntheticCluster {
    pub nodes: Vec<Node>,
    pub namespaces: Vec<Namespace>,
    pub pods: Vec<Pod>,
    pub leases: Vec<Lease>,
    pub claims: Vec<PersistentVolumeClaim>,
    pub volumes: Vec<PersistentVolume>,
    pub attachments: Vec<VolumeAttachment>,
    pub stateful_sets: Vec<StatefulSet>,
    pub replica_sets: Vec<ReplicaSet>,
    pub deployments: Vec<Deployment>,
    pub jobs: Vec<Job>,
    pub cron_jobs: Vec<CronJob>,
    pub slices: Vec<EndpointSlice>,
    /// `(namespace, name)` of a StatefulSet pod that holds a live Lease, has
    /// an attached volume and sits on a Ready node: the most expensive
    /// ForceDelete to gather facts for.
    pub leader_pod: (String, String),
    /// `(namespace, name)` of a Deployment pod on an unreachable node.
    pub unreachable_pod: (String, String),
    /// `(namespace, name)` of a pod of an active Job owned by a CronJob.
    pub job_pod: (String, String),
}

impl SyntheticCluster {
    /// Every object as the index stores it (copies; `self` is unchanged).
    pub fn objects(&self) -> Vec<Object> {
        fn records<T: Clone + Into<Object>>(objects: &[T]) -> impl Iterator<Item = Object> + '_ {
            objects.iter().cloned().map(Into::into)
        }
        records(&self.nodes)
            .chain(records(&self.namespaces))
            .chain(records(&self.pods))
            .chain(records(&self.leases))
            .chain(records(&self.claims))
            .chain(records(&self.volumes))
            .chain(records(&self.attachments))
            .chain(records(&self.stateful_sets))
            .chain(records(&self.replica_sets))
            .chain(records(&self.deployments))
            .chain(records(&self.jobs))
            .chain(records(&self.cron_jobs))
            .chain(records(&self.slices))
            .collect()
    }

    /// The cluster as `serve` sees a snapshot of it.
    pub fn view(&self) -> SnapshotCluster {
        SnapshotCluster::from_objects(self.objects(), KINDS)
    }
}

/// Every kind a synthetic cluster contains (ConfigMaps and Endpoints are
/// declared present, with no objects).
pub const KINDS: [Kind; 15] = Kind::ALL;

/// Generate the cluster `spec` describes.
pub fn generate(spec: &SyntheticSpec) -> SyntheticCluster {
    let mut generator = Generator {
        spec: spec.clone(),
        rng: Rng(spec.seed),
        out: SyntheticCluster::default(),
        node_names: Vec::new(),
        ip_counter: 0,
    };
    let node_count = (spec.pods / PODS_PER_NODE).max(3);
    for i in 0..node_count {
        let name = format!("node-{i:05}");
        let unreachable = i % 10 == 9;
        let out_of_service = i % 25 == 24;
        let mut taints = Vec::new();
        if unreachable || out_of_service {
            taints.push(Taint {
                key: "node.kubernetes.io/unreachable".to_owned(),
                effect: "NoExecute".to_owned(),
                ..Taint::default()
            });
        }
        if out_of_service {
            taints.push(Taint {
                key: "node.kubernetes.io/out-of-service".to_owned(),
                effect: "NoExecute".to_owned(),
                value: Some("nodeshutdown".to_owned()),
                ..Taint::default()
            });
        }
        let down = unreachable || out_of_service;
        let uid = generator.rng.uid();
        generator.out.nodes.push(Node {
            metadata: meta("", &name, uid),
            spec: Some(NodeSpec {
                taints: (!taints.is_empty()).then_some(taints),
                ..NodeSpec::default()
            }),
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".to_owned(),
                    status: if down { "Unknown" } else { "True" }.to_owned(),
                    last_heartbeat_time: Some(time(spec.now, if down { 1_200 } else { 10 })),
                    ..NodeCondition::default()
                }]),
                ..NodeStatus::default()
            }),
        });
        generator.node_names.push(name);
    }
    let namespaces = spec.pods.div_ceil(PODS_PER_NAMESPACE).max(1);
    let mut remaining = spec.pods;
    for n in 0..namespaces {
        let namespace = format!("team-{n:04}");
        let uid = generator.rng.uid();
        generator.out.namespaces.push(Namespace {
            metadata: meta("", &namespace, uid),
            spec: None,
            status: Some(NamespaceStatus {
                phase: Some("Active".to_owned()),
                ..NamespaceStatus::default()
            }),
        });
        let budget = remaining.min(PODS_PER_NAMESPACE);
        remaining -= budget;
        // 30% StatefulSet pods, 20% Job pods, the rest Deployments.
        let sets = (budget * 3 / 10) / 3;
        let jobs = budget / 5;
        let deployment_pods = budget - sets * 3 - jobs;
        for s in 0..sets {
            generator.stateful_set(&namespace, &format!("db{s}"));
        }
        if jobs > 0 {
            generator.cron_job(&namespace, "report", jobs);
        }
        let mut left = deployment_pods;
        let mut d = 0;
        while left > 0 {
            let replicas = left.min(5);
            generator.deployment(&namespace, &format!("web{d}"), replicas);
            left -= replicas;
            d += 1;
        }
    }
    let mut cluster = generator.out;
    cluster.leader_pod = well_known(&cluster, |pod, nodes_ready| {
        pod.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.ends_with("-0"))
            && pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some_and(nodes_ready)
    });
    cluster.unreachable_pod = well_known(&cluster, |pod, nodes_ready| {
        pod.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "ReplicaSet")
            && pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some_and(|n| !nodes_ready(n))
    });
    cluster.job_pod = well_known(&cluster, |pod, _| {
        pod.metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == "batch.kubernetes.io/job-tracking")
    });
    cluster
}

/// The first pod matching `pred` (given a "node is Ready" test).
fn well_known(
    cluster: &SyntheticCluster,
    pred: impl Fn(&Pod, &dyn Fn(&str) -> bool) -> bool,
) -> (String, String) {
    let ready: std::collections::HashSet<&str> = cluster
        .nodes
        .iter()
        .filter(|n| n.spec.as_ref().and_then(|s| s.taints.as_ref()).is_none())
        .filter_map(|n| n.metadata.name.as_deref())
        .collect();
    let is_ready = |name: &str| ready.contains(name);
    cluster
        .pods
        .iter()
        .find(|p| pred(p, &is_ready))
        .map(|p| {
            (
                p.metadata.namespace.clone().unwrap_or_default(),
                p.metadata.name.clone().unwrap_or_default(),
            )
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use forcegate::cluster::ClusterView;

    #[test]
    fn same_spec_same_cluster_with_the_requested_pod_count() {
        let spec = SyntheticSpec::with_pods(1_000);
        let a = generate(&spec);
        let b = generate(&spec);
        assert_eq!(a, b);
        assert_eq!(a.pods.len(), 1_000);
        let pods = a.objects().iter().filter(|o| o.kind() == Kind::Pod).count();
        assert_eq!(pods, 1_000);
        let other = generate(&SyntheticSpec { seed: 2, ..spec });
        assert_ne!(a.pods, other.pods);
    }

    #[test]
    fn well_known_pods_have_the_advertised_shape() {
        let spec = SyntheticSpec::with_pods(1_000);
        let cluster = generate(&spec);
        let view = cluster.view();
        let (ns, name) = &cluster.leader_pod;
        assert!(
            view.leases_held_by(ns, name).expect("known").len() == 1,
            "{ns}/{name}"
        );
        let (ns, name) = &cluster.unreachable_pod;
        let pod = view.pod(ns, name).expect("known").expect("exists");
        let node = pod.node_name.clone().expect("scheduled");
        let node = view.node(&node).expect("known").expect("exists");
        assert!(!node.taints.is_empty());
        let (ns, name) = &cluster.job_pod;
        assert!(!name.is_empty() && view.pod(ns, name).expect("known").is_some());
    }

    #[test]
    fn written_snapshots_load_back() {
        let cluster = generate(&SyntheticSpec::with_pods(60));
        let dir = tempfile::tempdir().expect("tempdir");
        for format in [Format::Json, Format::Yaml] {
            let out = dir.path().join(format!("{format:?}"));
            let files = write_snapshot(&cluster, &out, format).expect("writes");
            assert_eq!(files.len(), KINDS.len());
            let loaded = SnapshotCluster::load(&[&out]).expect("loads");
            assert_eq!(
                loaded.kinds(),
                Kind::ALL.to_vec(),
                "empty typed lists declare kinds"
            );
            assert_eq!(loaded.index().len(Kind::Pod), 60);
        }
    }
}
