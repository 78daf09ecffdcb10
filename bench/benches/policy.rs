//! Policy costs on the admission path.
//!
//! `policy_decide_denied` / `policy_decide_allowed`: facts + the whole
//! shipped policy set for one gated request (`Engine::decide`, the pure part
//! of an admission call) against the example snapshot: a StatefulSet leader
//! with an attached volume (two denials, templates rendered) and a pod on a
//! fenced node (allowed, recorded).
//! `policy_evaluate_denied`: the policies alone (facts gathered beforehand).
//! `policy_load_dir`: parsing and compiling the shipped directory (a reload).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use forcegate::admission;
use forcegate::cluster::SnapshotCluster;
use forcegate::engine::Settings;
use forcegate::facts;
use forcegate::intent;
use forcegate::policy::{EvalInput, PolicySet};
use forcegate_bench::repo_root;
use k8s_openapi::jiff::Timestamp;

fn bench(c: &mut Criterion) {
    let policies = forcegate_bench::shipped_policies().expect("shipped policies");
    let cluster = SnapshotCluster::load(&[repo_root().join("examples/cluster")]).expect("snapshot");
    let engine = forcegate_bench::engine(Arc::new(cluster), policies);
    for (name, file) in [
        ("policy_decide_denied", "force-delete-leader.json"),
        ("policy_decide_allowed", "force-delete-fenced.json"),
    ] {
        let body = std::fs::read(repo_root().join("examples/reviews").join(file)).expect("review");
        let request = admission::decode(&body).expect("decodes");
        let intent = intent::classify(&request);
        let (_, decision) = engine.decide(&intent, &request);
        assert_eq!(decision.allowed, name.ends_with("allowed"));
        c.bench_function(name, |b| {
            b.iter(|| black_box(engine.decide(black_box(&intent), black_box(&request))))
        });
    }
    let body = std::fs::read(repo_root().join("examples/reviews/force-delete-leader.json"))
        .expect("review");
    let request = admission::decode(&body).expect("decodes");
    let intent = intent::classify(&request);
    let now = Timestamp::now();
    let facts = facts::gather(&intent, &request, engine.cluster().as_ref(), now);
    let settings = Settings::default();
    let set = engine.policies().load();
    c.bench_function("policy_evaluate_denied", |b| {
        b.iter(|| {
            black_box(set.evaluate(&EvalInput {
                intent: black_box(&intent),
                facts: black_box(&facts),
                request: black_box(&request),
                break_glass_group: &settings.break_glass_group,
                now,
            }))
        })
    });
    c.bench_function("policy_load_dir", |b| {
        b.iter(|| black_box(PolicySet::load_dir(&repo_root().join("policies")).expect("loads")))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
