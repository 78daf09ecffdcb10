//! Fact lookups must not grow with cluster size: gathering the facts for a
//! force delete at 100k pods should cost no more than 1.2× the same at 1k.
//!
//! `cargo bench --bench cluster`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use forcegate::admission::Request;
use forcegate::cluster::synthetic::{self, KINDS, SyntheticSpec};
use forcegate::cluster::{ClusterView, SnapshotCluster};
use forcegate::facts;
use forcegate::intent::{Intent, IntentKind, ObjectRef, Requester};

fn force_delete(namespace: &str, name: &str) -> (Intent, Request) {
    let target = ObjectRef {
        version: "v1".into(),
        kind: "Pod".into(),
        resource: "pods".into(),
        namespace: Some(namespace.into()),
        name: name.into(),
        ..ObjectRef::default()
    };
    let request: Request = serde_json::from_value(serde_json::json!({
        "uid": "b1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": name, "namespace": namespace, "operation": "DELETE",
        "userInfo": {"username": "alice"}, "object": null, "oldObject": null
    }))
    .expect("request");
    let intent = Intent {
        kind: IntentKind::ForceDelete {
            already_terminating: false,
        },
        target,
        requester: Requester::default(),
        dry_run: false,
    };
    (intent, request)
}

fn lookups(c: &mut Criterion) {
    let mut group = c.benchmark_group("cluster");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for pods in [1_000usize, 100_000] {
        let spec = SyntheticSpec::with_pods(pods);
        let cluster = synthetic::generate(&spec);
        let (namespace, name) = cluster.leader_pod.clone();
        let (job_ns, job_name) = cluster.job_pod.clone();
        let view = SnapshotCluster::from_objects(cluster.objects, KINDS);
        let (intent, request) = force_delete(&namespace, &name);
        let gathered = facts::gather(&intent, &request, &view, spec.now);
        assert!(gathered.unknown.is_empty() && gathered.leader.is_some_and(|l| l.is_leader));

        group.bench_with_input(
            BenchmarkId::new("gather_force_delete_leader", pods),
            &pods,
            |b, _| {
                b.iter(|| facts::gather(black_box(&intent), black_box(&request), &view, spec.now))
            },
        );
        let (job_intent, job_request) = force_delete(&job_ns, &job_name);
        group.bench_with_input(
            BenchmarkId::new("gather_force_delete_job_pod", pods),
            &pods,
            |b, _| {
                b.iter(|| {
                    facts::gather(
                        black_box(&job_intent),
                        black_box(&job_request),
                        &view,
                        spec.now,
                    )
                })
            },
        );
        group.bench_with_input(BenchmarkId::new("pod_by_name", pods), &pods, |b, _| {
            b.iter(|| view.pod(black_box(&namespace), black_box(&name)))
        });
    }
    group.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
