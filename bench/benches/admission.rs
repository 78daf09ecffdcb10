//! What one admission decision costs, per intent and per cluster size.
//!
//! - `decide/<scenario>/<pods>`: classify + facts + policy evaluation (the
//!   pure part of an admission call) for requests aimed at real objects of a
//!   synthetic cluster of 1k, 10k and 100k pods, rotating over 64 targets so
//!   one warm cache line does not flatter the number. The target: at 100k
//!   pods no more than 1.2× the time at 1k.
//! - `admit/<scenario>/10000`: the whole `Engine::admit` (decode → classify
//!   → facts → policies → record → encode) with a recorder that writes
//!   nothing, i.e. the CPU the server spends per request outside HTTP/TLS.
//! - `snapshot_load/<pods>`: reading a written JSON snapshot back (start-up
//!   and reload time). 100k is skipped unless `FORCEGATE_BENCH_LOAD_100K=1`
//!   (each iteration takes seconds).
//!
//! `cargo bench -p forcegate-bench --bench admission` (filter with e.g. `-- decide/`).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use forcegate::admission::Request;
use forcegate::cluster::{Kind, SnapshotCluster};
use forcegate::engine::{Endpoint, Engine};
use forcegate::intent;
use forcegate_bench::decode_checked;
use forcegate_bench::reviews::{Scenario, Targets, keep_leases_held};
use forcegate_bench::synthetic::{self, Format, SyntheticCluster, SyntheticSpec};

/// The allocator `forcegate serve` runs on (see src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// Distinct targets each bench rotates over.
const TARGETS: usize = 64;

/// A synthetic cluster whose leader Leases stay held during the bench.
fn cluster(pods: usize) -> SyntheticCluster {
    let mut cluster = synthetic::generate(&SyntheticSpec::with_pods(pods));
    keep_leases_held(&mut cluster);
    cluster
}

fn engine(cluster: &SyntheticCluster) -> Engine {
    let policies = forcegate_bench::shipped_policies().expect("shipped policies load");
    forcegate_bench::engine(Arc::new(cluster.view()), policies)
}

/// Decoded requests of `scenario`, each checked to take the expected path.
fn requests(engine: &Engine, cluster: &SyntheticCluster, scenario: Scenario) -> Vec<Request> {
    let bodies = Targets::new(cluster).reviews(scenario, TARGETS);
    assert!(!bodies.is_empty(), "no target for {scenario:?}");
    bodies
        .iter()
        .map(|body| match decode_checked(engine, scenario, body) {
            Ok((_, request)) => request,
            Err(err) => panic!("{err:#}"),
        })
        .collect()
}

fn decide(c: &mut Criterion) {
    let mut group = c.benchmark_group("decide");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(1));
    for pods in SIZES {
        let cluster = cluster(pods);
        let engine = engine(&cluster);
        for scenario in Scenario::ALL {
            let requests = requests(&engine, &cluster, scenario);
            let mut next = 0usize;
            group.bench_function(BenchmarkId::new(scenario.name(), pods), |b| {
                b.iter(|| {
                    next = (next + 1) % requests.len();
                    let request = &requests[next];
                    let intent = intent::classify(black_box(request));
                    black_box(engine.decide(&intent, request))
                })
            });
        }
    }
    group.finish();
}

fn admit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("admit");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(1));
    let pods = 10_000;
    let cluster = cluster(pods);
    let engine = engine(&cluster);
    let targets = Targets::new(&cluster);
    for scenario in Scenario::ALL {
        let bodies: Vec<Vec<u8>> = targets
            .reviews(scenario, TARGETS)
            .iter()
            .map(|body| serde_json::to_vec(body).expect("serializes"))
            .collect();
        let mut next = 0usize;
        group.bench_function(BenchmarkId::new(scenario.name(), pods), |b| {
            b.iter(|| {
                next = (next + 1) % bodies.len();
                let admitted = runtime
                    .block_on(engine.admit(black_box(&bodies[next]), Endpoint::Validate))
                    .expect("admits");
                black_box(admitted.body)
            })
        });
    }
    group.finish();
}

fn snapshot_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_load");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5));
    let with_100k = std::env::var("FORCEGATE_BENCH_LOAD_100K").is_ok_and(|v| v == "1");
    for pods in SIZES {
        if pods > 10_000 && !with_100k {
            continue;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let cluster = synthetic::generate(&SyntheticSpec::with_pods(pods));
        synthetic::write_snapshot(&cluster, dir.path(), Format::Json).expect("writes");
        drop(cluster);
        group.throughput(Throughput::Elements(pods as u64));
        group.bench_function(BenchmarkId::from_parameter(pods), |b| {
            b.iter(|| {
                let snapshot = SnapshotCluster::load(&[dir.path()]).expect("loads");
                assert_eq!(snapshot.index().len(Kind::Pod), pods);
                snapshot
            })
        });
    }
    group.finish();
}

criterion_group!(benches, decide, admit, snapshot_load);
criterion_main!(benches);
