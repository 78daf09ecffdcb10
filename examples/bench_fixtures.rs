//! Fixtures for the load run (`bench/load.py`): a deterministic synthetic
//! snapshot and AdmissionReview bodies aimed at objects in it.
//!
//! ```text
//! cargo run --release --example bench_fixtures -- PODS OUT_DIR
//! ```
//!
//! Writes `OUT_DIR/snapshot/` (kubectl-shaped JSON lists), `OUT_DIR/bodies.jsonl`
//! (the load mix, one compact review per line, interleaved: force delete of
//! a leader, of a pod with an attached volume, a finalizer strip, a kubelet
//! final delete), `OUT_DIR/bodies/<scenario>.jsonl` (each kind of the mix
//! alone, to see which one costs what), and `OUT_DIR/samples/<scenario>.json`
//! (one of each, plus a namespace finalize). Before writing, every body is decided in-process
//! with the shipped policies and must take its scenario's path (denied or
//! allowed, no unknown facts), so the load run measures real decisions.
//! Prints a JSON summary on stdout.

#[path = "../benches/support/reviews.rs"]
mod reviews;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail, ensure};
use arc_swap::ArcSwap;
use forcegate::admission;
use forcegate::cleanup::NoopRecorder;
use forcegate::cluster::SnapshotCluster;
use forcegate::cluster::synthetic::{self, Format, KINDS, SyntheticSpec};
use forcegate::engine::{Engine, Settings};
use forcegate::intent;
use forcegate::policy::PolicySet;
use serde_json::{Value, json};

use self::reviews::{Scenario, Targets, keep_leases_held};

/// Distinct targets per scenario in the load mix.
const PER_SCENARIO: usize = 64;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [pods, out] = args.as_slice() else {
        eprintln!("usage: bench_fixtures PODS OUT_DIR");
        return ExitCode::from(2);
    };
    let Ok(pods) = pods.parse::<usize>() else {
        eprintln!("PODS must be a number, got {pods:?}");
        return ExitCode::from(2);
    };
    match write(pods, Path::new(out)) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("bench_fixtures: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn write(pods: usize, out: &Path) -> anyhow::Result<Value> {
    let spec = SyntheticSpec::with_pods(pods);
    let mut cluster = synthetic::generate(&spec);
    keep_leases_held(&mut cluster);
    let policies_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let policies = PolicySet::load_dir(&policies_dir)
        .map_err(|err| anyhow::anyhow!("{}: {err:?}", policies_dir.display()))?;
    let engine = Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        Arc::new(SnapshotCluster::from_objects(cluster.objects(), KINDS)),
        Arc::new(NoopRecorder),
        Settings::default(),
    );
    let targets = Targets::new(&cluster);
    let mut by_scenario = Vec::new();
    for scenario in Scenario::ALL {
        let bodies = targets.reviews(scenario, PER_SCENARIO);
        ensure!(!bodies.is_empty(), "no target for {}", scenario.name());
        for body in &bodies {
            check(&engine, scenario, body)?;
        }
        by_scenario.push((scenario, bodies));
    }

    let snapshot_dir = out.join("snapshot");
    let files = synthetic::write_snapshot(&cluster, &snapshot_dir, Format::Json)
        .with_context(|| format!("writing {}", snapshot_dir.display()))?;
    let samples_dir = out.join("samples");
    std::fs::create_dir_all(&samples_dir)?;
    let alone_dir = out.join("bodies");
    std::fs::create_dir_all(&alone_dir)?;
    let mut mix = Vec::new();
    let mut alone = serde_json::Map::new();
    for (scenario, bodies) in &by_scenario {
        let sample = samples_dir.join(format!("{}.json", scenario.name()));
        std::fs::write(&sample, serde_json::to_vec_pretty(&bodies[0])?)?;
        if Scenario::LOAD_MIX.contains(scenario) {
            mix.push(bodies);
            let path = alone_dir.join(format!("{}.jsonl", scenario.name()));
            write_interleaved(&path, &[bodies])?;
            alone.insert(scenario.name().to_owned(), json!(path));
        }
    }
    let bodies_path = out.join("bodies.jsonl");
    let lines = write_interleaved(&bodies_path, &mix)?;
    Ok(json!({
        "pods": pods,
        "snapshot": snapshot_dir,
        "snapshotFiles": files.len(),
        "bodies": bodies_path,
        "bodyLines": lines,
        "bodiesAlone": alone,
        "samples": samples_dir,
        "scenarios": by_scenario.iter().map(|(s, b)| json!({
            "name": s.name(),
            "targets": b.len(),
            "expectAllowed": s.expect_allowed(),
            "inLoadMix": Scenario::LOAD_MIX.contains(s),
        })).collect::<Vec<_>>(),
    }))
}

/// The body must decode, classify, and be decided as its scenario says.
fn check(engine: &Engine, scenario: Scenario, body: &Value) -> anyhow::Result<()> {
    let bytes = serde_json::to_vec(body)?;
    let request = admission::decode(&bytes)?;
    let intent = intent::classify(&request);
    let (facts, decision) = engine.decide(&intent, &request);
    if !facts.unknown.is_empty() {
        bail!(
            "{} {}: unknown facts {:?}",
            scenario.name(),
            request.name,
            facts.unknown
        );
    }
    if decision.allowed != scenario.expect_allowed() {
        bail!(
            "{} {}: expected allowed={}, got {:?}",
            scenario.name(),
            request.name,
            scenario.expect_allowed(),
            decision.message
        );
    }
    for policy in scenario.must_fire() {
        if !decision.outcomes.iter().any(|o| *o.policy == **policy) {
            bail!(
                "{} {}: {policy} did not fire: {}",
                scenario.name(),
                request.name,
                decision.message
            );
        }
    }
    Ok(())
}

/// One compact body per line, scenarios interleaved (a, b, c, d, a, b, ...).
fn write_interleaved(path: &Path, mix: &[&Vec<Value>]) -> anyhow::Result<usize> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let longest = mix.iter().map(|b| b.len()).max().unwrap_or_default();
    let mut lines = 0;
    for i in 0..longest {
        for bodies in mix {
            if let Some(body) = bodies.get(i % bodies.len()) {
                serde_json::to_writer(&mut out, body)?;
                out.write_all(b"\n")?;
                lines += 1;
            }
        }
    }
    out.flush()?;
    Ok(lines)
}
