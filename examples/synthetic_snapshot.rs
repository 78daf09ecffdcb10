//! Write a synthetic snapshot, or load one and report memory.
//!
//! ```text
//! cargo run --release --example synthetic_snapshot -- write 10000 /tmp/snap-10k [json|yaml]
//! cargo run --release --example synthetic_snapshot -- load /tmp/snap-10k
//! ```
//!
//! `load` prints the resident set size (VmRSS) and its peak (VmHWM) from
//! `/proc/self/status` before and after loading, and the load time.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use forcegate::cluster::synthetic::{self, Format, SyntheticSpec};
use forcegate::cluster::{Kind, SnapshotCluster};

fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["write", pods, dir, rest @ ..] => {
            let Ok(pods) = pods.parse::<usize>() else {
                eprintln!("pods must be a number, got {pods:?}");
                return ExitCode::from(2);
            };
            let format = match rest.first() {
                Some(&"yaml") => Format::Yaml,
                _ => Format::Json,
            };
            let cluster = synthetic::generate(&SyntheticSpec::with_pods(pods));
            match synthetic::write_snapshot(&cluster, &PathBuf::from(dir), format) {
                Ok(files) => {
                    println!("wrote {} files to {dir}", files.len());
                    println!("leader pod: {}/{}", cluster.leader_pod.0, cluster.leader_pod.1);
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("{dir}: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        ["load", dir] => {
            println!("before: {}", memory());
            let started = Instant::now();
            let snapshot = match SnapshotCluster::load(&[PathBuf::from(dir)]) {
                Ok(snapshot) => snapshot,
                Err(err) => {
                    eprintln!("{err}");
                    return ExitCode::FAILURE;
                }
            };
            let elapsed = started.elapsed();
            println!(
                "loaded {} pods, {} objects in {:.2?}",
                snapshot.index().len(Kind::Pod),
                Kind::ALL.iter().map(|k| snapshot.index().len(*k)).sum::<usize>(),
                elapsed
            );
            println!("after:  {}", memory());
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: synthetic_snapshot write PODS DIR [json|yaml] | load DIR");
            ExitCode::from(2)
        }
    }
}
