//! Write a synthetic snapshot, or load one and report memory.
//!
//! ```text
//! cargo run --release -p forcegate-bench --bin synthetic_snapshot -- write 10000 /tmp/snap-10k [json|yaml]
//! cargo run --release -p forcegate-bench --bin synthetic_snapshot -- load /tmp/snap-10k
//! cargo run --release -p forcegate-bench --bin synthetic_snapshot -- probe /tmp/snap-10k/pods.json
//! ```
//!
//! `load` prints the resident set size (VmRSS) and its peak (VmHWM) from
//! `/proc/self/status` before and after loading, the bytes the heap really
//! holds (counted by a wrapping allocator) and the load time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use forcegate::cluster::{Kind, SnapshotCluster};
use forcegate_bench::synthetic::{self, Format, SyntheticSpec};

/// Counts live heap bytes, to tell what the index holds from what the
/// allocator keeps around (RSS).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .chain([format!("heap: {} kB", LIVE.load(Ordering::Relaxed) / 1024)])
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
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
                    println!(
                        "leader pod: {}/{}",
                        cluster.leader_pod.0, cluster.leader_pod.1
                    );
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
                Kind::ALL
                    .iter()
                    .map(|k| snapshot.index().len(*k))
                    .sum::<usize>(),
                elapsed
            );
            println!("after:  {}", memory());
            ExitCode::SUCCESS
        }
        ["probe", file] => {
            // Heap cost of one decoded pod and of indexing it.
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let list: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            let items = list["items"].as_array().cloned().unwrap_or_default();
            let n = items.len().min(1000);
            let before = LIVE.load(Ordering::Relaxed);
            let objects: Vec<_> = items[..n]
                .iter()
                .filter_map(|v| forcegate::cluster::Object::from_value(Kind::Pod, v.clone()).ok())
                .collect();
            let decoded = LIVE.load(Ordering::Relaxed);
            let mut index = forcegate::cluster::index::Index::new();
            for o in objects {
                index.apply(o);
            }
            let indexed = LIVE.load(Ordering::Relaxed);
            println!(
                "per pod: decoded {} B, indexed total {} B",
                (decoded - before) / n.max(1),
                (indexed - before) / n.max(1)
            );
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "usage: synthetic_snapshot write PODS DIR [json|yaml] | load DIR | probe PODS.json"
            );
            ExitCode::from(2)
        }
    }
}
