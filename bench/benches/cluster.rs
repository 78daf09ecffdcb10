//! Fact lookups must not grow with cluster size: gathering the facts for a
//! force delete at 100k pods should cost no more than 1.2× the same at 1k.
//!
//! `cargo bench -p forcegate-bench --bench cluster`
//!
//! Besides the criterion groups, `main` first prints an interleaved
//! comparison: both sizes timed in alternating batches, keeping the fastest
//! batch of each. On a shared machine that minimum is far steadier than
//! criterion's means, and it is what the 1.2× bound is checked against.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group};
use forcegate::admission::Request;
use forcegate::cluster::{ClusterView, SnapshotCluster};
use forcegate::facts;
use forcegate::intent::{Intent, IntentKind, ObjectRef, Requester};
use forcegate_bench::synthetic::{self, KINDS, SyntheticSpec};

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

struct Case {
    pods: usize,
    view: SnapshotCluster,
    intent: Intent,
    request: Request,
    now: k8s_openapi::jiff::Timestamp,
}

fn leader_case(pods: usize) -> Case {
    let spec = SyntheticSpec::with_pods(pods);
    let cluster = synthetic::generate(&spec);
    let (namespace, name) = cluster.leader_pod.clone();
    let view = SnapshotCluster::from_objects(cluster.objects(), KINDS);
    let (intent, request) = force_delete(&namespace, &name);
    Case {
        pods,
        view,
        intent,
        request,
        now: spec.now,
    }
}

/// Alternate batches of gathers on both sizes; keep each size's fastest.
fn interleaved_ratio() {
    let cases = [leader_case(1_000), leader_case(100_000)];
    let mut best = [f64::MAX; 2];
    for _round in 0..300 {
        for (i, case) in cases.iter().enumerate() {
            let started = Instant::now();
            for _ in 0..500 {
                black_box(facts::gather(
                    black_box(&case.intent),
                    black_box(&case.request),
                    &case.view,
                    case.now,
                ));
            }
            best[i] = best[i].min(started.elapsed().as_secs_f64() / 500.0);
        }
    }
    println!(
        "interleaved gather (ForceDelete of a StatefulSet leader), fastest batch: {} pods {:.2} µs, {} pods {:.2} µs, ratio {:.2}",
        cases[0].pods,
        best[0] * 1e6,
        cases[1].pods,
        best[1] * 1e6,
        best[1] / best[0]
    );
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
        let view = SnapshotCluster::from_objects(cluster.objects(), KINDS);
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

fn main() {
    interleaved_ratio();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
