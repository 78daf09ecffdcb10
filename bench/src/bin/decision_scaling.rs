//! Decision time vs cluster size, measured so that a shared, noisy machine
//! cannot fake a trend: the clusters of every size live side by side and are
//! timed in interleaved rounds (1k, 10k, 100k, 1k, 10k, ...), so a burst of
//! someone else's build hits all sizes alike; the median round is reported.
//!
//! ```text
//! cargo run --release -p forcegate-bench --bin decision_scaling -- [ROUNDS] [PODS,PODS,...] [SCENARIO,...]
//! ```
//!
//! Naming scenarios (e.g. `force_delete_leader`) times only those, which
//! is what a per-scenario profile under callgrind wants. `DECIDE_THREADS=2`
//! decides on two threads at once; `DECIDE_BETWEEN=1` decodes a review
//! between decisions, as a server does (see [`Mode`]).
//!
//! Times classify + facts + policies (`Engine::decide`, the pure part of an
//! admission call) per scenario, rotating over the same number of real
//! targets at every size (at most 64; fewer where the smallest cluster has
//! fewer, e.g. pods with volumes on unreachable nodes), and prints
//! JSON: `{"rounds": R, "decide_ns": {scenario: {pods: median ns}}}`.
//! `benches/admission.rs` measures the same with criterion, per size.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::ensure;
use forcegate::admission::{self, Request};
use forcegate::engine::Engine;
use forcegate::intent;
use forcegate::policy::PolicySet;
use forcegate_bench::reviews::{Scenario, Targets, keep_leases_held};
use forcegate_bench::synthetic::{self, SyntheticSpec};
use forcegate_bench::{decode_checked, shipped_policies};
use serde_json::json;

/// The allocator `forcegate serve` runs on (see src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TARGETS: usize = 64;
/// Decisions timed per scenario, size and round.
const BATCH: usize = 512;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args.first().and_then(|r| r.parse().ok()).unwrap_or(15usize);
    let sizes: Vec<usize> = args
        .get(1)
        .map(|s| s.split(',').filter_map(|p| p.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let only: Vec<&str> = args
        .get(2)
        .map(|s| s.split(',').collect())
        .unwrap_or_default();
    let scenarios: Vec<Scenario> = Scenario::ALL
        .into_iter()
        .filter(|s| only.is_empty() || only.contains(&s.name()))
        .collect();
    if scenarios.is_empty() {
        eprintln!("decision_scaling: no scenario named {only:?}");
        return ExitCode::FAILURE;
    }
    match measure(rounds.clamp(1, 200), &sizes, &scenarios) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("decision_scaling: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// One size: an engine over its cluster and the decoded requests per scenario.
struct Subject {
    pods: usize,
    engine: Engine,
    requests: Vec<(Scenario, Vec<Request>)>,
    bodies: Vec<Vec<u8>>,
}

fn subject(pods: usize, policies: &PolicySet, scenarios: &[Scenario]) -> anyhow::Result<Subject> {
    let mut cluster = synthetic::generate(&SyntheticSpec::with_pods(pods));
    keep_leases_held(&mut cluster);
    let engine = forcegate_bench::engine(Arc::new(cluster.view()), policies.clone());
    let targets = Targets::new(&cluster);
    let mut requests = Vec::new();
    let mut bodies = Vec::new();
    for &scenario in scenarios {
        let mut decoded = Vec::new();
        for body in targets.reviews(scenario, TARGETS) {
            let (bytes, request) = decode_checked(&engine, scenario, &body)?;
            bodies.push(bytes);
            decoded.push(request);
        }
        ensure!(!decoded.is_empty(), "no target for {}", scenario.name());
        requests.push((scenario, decoded));
    }
    Ok(Subject {
        pods,
        engine,
        requests,
        bodies,
    })
}

fn measure(
    rounds: usize,
    sizes: &[usize],
    scenarios: &[Scenario],
) -> anyhow::Result<serde_json::Value> {
    let policies = shipped_policies()?;
    let mut subjects: Vec<Subject> = sizes
        .iter()
        .map(|&pods| subject(pods, &policies, scenarios))
        .collect::<Result<_, _>>()?;
    // Rotate over as many distinct targets at every size (a small cluster
    // has fewer, e.g. 19 pods with volumes on unreachable nodes at 1k), so
    // the comparison is about cluster size, not about a hotter working set.
    for (i, scenario) in scenarios.iter().enumerate() {
        let fewest = subjects
            .iter()
            .map(|s| s.requests[i].1.len())
            .min()
            .unwrap_or_default();
        for subject in &mut subjects {
            debug_assert_eq!(subject.requests[i].0, *scenario);
            subject.requests[i].1.truncate(fewest);
        }
    }
    let mode = Mode::from_env();
    let mut samples: BTreeMap<(&str, usize), Vec<f64>> = BTreeMap::new();
    for _ in 0..rounds {
        for subject in &subjects {
            for (scenario, requests) in &subject.requests {
                let ns = time_batch(subject, requests, mode);
                samples
                    .entry((scenario.name(), subject.pods))
                    .or_default()
                    .push(ns);
            }
        }
    }
    let mut report: BTreeMap<&str, BTreeMap<String, f64>> = BTreeMap::new();
    for ((scenario, pods), mut ns) in samples {
        ns.sort_by(f64::total_cmp);
        let median = ns[ns.len() / 2];
        report
            .entry(scenario)
            .or_default()
            .insert(pods.to_string(), (median * 10.0).round() / 10.0);
    }
    Ok(json!({
        "rounds": rounds,
        "batch": BATCH,
        "threads": mode.threads,
        "between": mode.between,
        "decide_ns": report,
    }))
}

/// How a batch is run; the defaults are the plain hot loop.
#[derive(Clone, Copy)]
struct Mode {
    /// `DECIDE_THREADS`: threads deciding at once on one engine, as a
    /// server's workers do (shared records and counters would show).
    threads: usize,
    /// `DECIDE_BETWEEN=1`: decode a review and re-encode its object
    /// before each decision, as a server does between two, so decisions
    /// run on colder caches; the decision alone is timed.
    between: bool,
}

impl Mode {
    fn from_env() -> Mode {
        let threads = std::env::var("DECIDE_THREADS").ok();
        Mode {
            threads: threads.and_then(|t| t.parse().ok()).unwrap_or(1).max(1),
            between: std::env::var_os("DECIDE_BETWEEN").is_some_and(|v| v == "1"),
        }
    }
}

/// Mean ns per decision over `BATCH` decisions on each thread.
fn time_batch(subject: &Subject, requests: &[Request], mode: Mode) -> f64 {
    let decide = |i: usize, thread: usize| {
        let request = &requests[(i + thread) % requests.len()];
        let intent = intent::classify(black_box(request));
        black_box(subject.engine.decide(&intent, request));
    };
    let run = |thread: usize| {
        if !mode.between {
            // One clock read per batch, so the plain loop's numbers carry
            // no timer cost and compare with earlier runs.
            let started = Instant::now();
            (0..BATCH).for_each(|i| decide(i, thread));
            return started.elapsed().as_nanos() as f64 / BATCH as f64;
        }
        let mut spent = std::time::Duration::ZERO;
        for i in 0..BATCH {
            let body = &subject.bodies[(i * 13 + thread) % subject.bodies.len()];
            let other = admission::decode(black_box(body)).expect("decoded once already");
            black_box(serde_json::to_vec(&other.old_object).expect("JSON"));
            let started = Instant::now();
            decide(i, thread);
            spent += started.elapsed();
        }
        spent.as_nanos() as f64 / BATCH as f64
    };
    if mode.threads == 1 {
        return run(0);
    }
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..mode.threads)
            .map(|thread| scope.spawn(move || run(thread)))
            .collect();
        let total: f64 = workers
            .into_iter()
            .map(|w| w.join().expect("no panic"))
            .sum();
        total / mode.threads as f64
    })
}
