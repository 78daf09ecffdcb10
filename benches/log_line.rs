//! What `serve`'s decision log line costs with `--log-format json`:
//! forcegate's formatter against tracing-subscriber's own JSON formatter,
//! same event, same fields, written to a sink (the writer's cost is the
//! batched buffer's, measured by the load run).
//!
//! `cargo bench --bench log_line`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use forcegate::telemetry::JsonLines;
use tracing::Dispatch;

/// The allocator `forcegate serve` runs on (see src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The fields `log_decision` writes for a denied force delete.
fn decision_line(n: u64) {
    let elapsed = Duration::from_nanos(41_700 + n % 7);
    let duration_ms = (elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0;
    let object = format!("pods db/postgres-{}", n % 3);
    tracing::info!(
        target: "forcegate::server::routes",
        uid = %"705ab4f5-6393-11e8-b7cc-42010a800002",
        endpoint = "validate",
        intent = "ForceDelete",
        user = %"oncall@example.com",
        object = %object,
        decision = "denied",
        policies = %"statefulset-leader,attached-volumes,pdb-budget",
        record = "",
        break_glass = false,
        dry_run = false,
        duration_ms,
        "admission decision"
    );
}

fn bench(c: &mut Criterion) {
    let ours = Dispatch::new(
        tracing_subscriber::fmt()
            .with_writer(std::io::sink)
            .event_format(JsonLines)
            .finish(),
    );
    let theirs = Dispatch::new(
        tracing_subscriber::fmt()
            .with_writer(std::io::sink)
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .finish(),
    );
    let mut group = c.benchmark_group("log_line");
    for (name, dispatch) in [("forcegate", &ours), ("tracing_subscriber_json", &theirs)] {
        tracing::dispatcher::with_default(dispatch, || {
            let mut n = 0u64;
            group.bench_function(name, |b| {
                b.iter(|| {
                    n += 1;
                    decision_line(black_box(n));
                })
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
