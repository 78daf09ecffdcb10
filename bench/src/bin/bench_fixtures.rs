//! Fixtures for the load run (`bench/load.py`): a deterministic synthetic
//! snapshot and AdmissionReview bodies aimed at objects in it.
//!
//! ```text
//! cargo run --release -p forcegate-bench --bin bench_fixtures -- PODS OUT_DIR
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

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, ensure};
use forcegate_bench::reviews::{Scenario, Targets, keep_leases_held};
use forcegate_bench::synthetic::{self, Format, SyntheticSpec};
use forcegate_bench::{decode_checked, shipped_policies};
use serde_json::{Value, json};

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
    let engine = forcegate_bench::engine(Arc::new(cluster.view()), shipped_policies()?);
    let targets = Targets::new(&cluster);
    let mut by_scenario = Vec::new();
    for scenario in Scenario::ALL {
        let bodies = targets.reviews(scenario, PER_SCENARIO);
        ensure!(!bodies.is_empty(), "no target for {}", scenario.name());
        for body in &bodies {
            decode_checked(&engine, scenario, body)?;
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
