//! A bare admission server to measure `forcegate serve` against.
//!
//! Same TLS (rustls/ring, the same certificate store and ALPN), same HTTP
//! stack and settings (`forcegate::server::listen`, the listener `serve`
//! runs on: hyper-util auto builder, header/handshake timeouts, connection
//! and concurrency limits, graceful drain), same flags (it parses `forcegate
//! serve`'s own arguments and builds the server config the same way): only
//! the handler differs. It checks the content type, reads the
//! body under the same limit, decodes the AdmissionReview with the same
//! strict decoder, and answers "allowed" through the same encoder. Whatever
//! `serve` spends beyond this is the price of deciding (classify, facts,
//! policies, record, metrics, logs).
//!
//! With `--answers`, it gives the answers `serve` gave (recorded by UID)
//! through the same encoder and logs the same decision line, without
//! deciding: the answer floor, what any engine giving those answers would
//! cost at least.
//!
//! With `--facts-from SNAPSHOT` as well, it also classifies each request and
//! gathers its facts from that cluster snapshot as `serve` does (the groups
//! the shipped policies read), then gives the recorded answer: the facts
//! floor, what any engine that reads these facts and gives these answers
//! would cost at least, however it evaluates policies.
//!
//! ```text
//! cargo run --release -p forcegate-bench --bin baseline -- --listen 127.0.0.1:8444 --tls-dir certs
//! ```
//!
//! Used by `bench/load.py`; not a product.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use clap::Parser;
use forcegate::admission::{self, BadReview};
use forcegate::cli::ServeArgs;
use forcegate::cluster::SnapshotCluster;
use forcegate::decision::Decision;
use forcegate::facts::{self, Needs};
use forcegate::intent;
use forcegate::server::{self, Health, Metrics, Shutdown};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use prometheus_client::registry::Registry;
use tokio::sync::Semaphore;

/// The allocator `forcegate serve` runs on (see src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `forcegate serve`'s flags; those about policies and the cluster are
/// accepted and ignored, so both servers can be started the same way.
#[derive(Debug, Parser)]
#[command(
    name = "baseline",
    about = "Bare AdmissionReview server (benchmark baseline)"
)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// Burn this many microseconds of CPU per admission after decoding:
    /// calibrates what a given per-request cost does to throughput and
    /// latency on the load run's machine (0: a bare baseline).
    #[arg(long, default_value_t = 0)]
    work_us: u64,
    /// AdmissionReviews `serve` answered, one JSON per line: answer each
    /// request with the one of the same UID (others are allowed) and log
    /// gated ones as `serve` does.
    #[arg(long)]
    answers: Option<PathBuf>,
    /// With `--answers`: also classify each request and gather its facts
    /// from this cluster snapshot (a directory or file, as `serve --cluster`).
    #[arg(long, requires = "answers")]
    facts_from: Option<PathBuf>,
}

/// What the handler needs: the limits `serve` applies in its handler.
/// Shared behind one `Arc`, as `serve` shares its state.
struct Limits {
    body_limit: usize,
    request_timeout: Duration,
    permits: Arc<Semaphore>,
    work: Work,
    answers: Arc<Answers>,
    /// The facts floor's cluster, when `--facts-from` is given.
    facts_from: Option<Arc<SnapshotCluster>>,
}

/// Recorded answers by request UID.
type Answers = HashMap<String, Answer>;

/// What `serve` answered to one request, and what its log line named.
struct Answer {
    decision: Decision,
    /// The intent's name; empty when the request was not gated.
    intent: String,
    /// The names of the policies that fired, comma-separated, as `serve`
    /// writes them into its line.
    policies: String,
}

/// Read recorded AdmissionReviews: each line's `response`, keyed by UID.
fn load_answers(path: &Path) -> anyhow::Result<Answers> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut answers = Answers::new();
    for (line, review) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let review: serde_json::Value = serde_json::from_str(review)
            .with_context(|| format!("{}:{}: not JSON", path.display(), line + 1))?;
        let response = &review["response"];
        let uid = response["uid"].as_str().unwrap_or_default();
        anyhow::ensure!(
            !uid.is_empty(),
            "{}:{}: no response.uid",
            path.display(),
            line + 1
        );
        let texts = |value: &serde_json::Value| -> Vec<String> {
            value
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let audit_annotations: BTreeMap<String, String> =
            serde_json::from_value(response["auditAnnotations"].clone()).unwrap_or_default();
        let policies = audit_annotations
            .get("policies")
            .map_or_else(String::new, |list| {
                let names: Vec<&str> = list
                    .split(',')
                    .map(|p| p.split('=').next().unwrap_or(p))
                    .collect();
                names.join(",")
            });
        let answer = Answer {
            intent: audit_annotations.get("intent").cloned().unwrap_or_default(),
            policies,
            decision: Decision {
                allowed: response["allowed"].as_bool().unwrap_or(true),
                message: response["status"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                warnings: texts(&response["warnings"]),
                audit_annotations,
                ..Decision::default()
            },
        };
        answers.insert(uid.to_owned(), answer);
    }
    Ok(answers)
}

/// A fixed amount of CPU work per request, in loop iterations calibrated
/// once at start (iterations, not wall time: a preempted request must not
/// get its work for free).
#[derive(Clone, Copy)]
struct Work {
    iterations: u64,
}

impl Work {
    fn calibrate(micros: u64) -> Work {
        if micros == 0 {
            return Work { iterations: 0 };
        }
        // Best of a few 20 ms samples: the least disturbed one.
        let sample = 1u64 << 20;
        let best = (0..5)
            .map(|_| {
                let started = Instant::now();
                Work { iterations: sample }.run();
                started.elapsed()
            })
            .min()
            .unwrap_or(Duration::from_millis(1));
        let per_micro = sample as f64 / (best.as_secs_f64() * 1e6);
        Work {
            iterations: (per_micro * micros as f64).round() as u64,
        }
    }

    fn run(self) {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..self.iterations {
            state = std::hint::black_box(state.rotate_left(5) ^ 0x2545_f491_4f6c_dd1d);
        }
        std::hint::black_box(state);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _log_writer = match forcegate::telemetry::init(cli.serve.log_format) {
        Ok(guard) => guard,
        Err(err) => {
            eprintln!("baseline: cannot start the log writer: {err}");
            return ExitCode::FAILURE;
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let work = Work::calibrate(cli.work_us);
    let answers = match cli.answers.as_deref().map(load_answers).transpose() {
        Ok(answers) => answers.unwrap_or_default(),
        Err(err) => {
            eprintln!("baseline: {err:#}");
            return ExitCode::FAILURE;
        }
    };
    let snapshot = cli
        .facts_from
        .as_deref()
        .map(|dir| SnapshotCluster::load(&[dir]));
    let facts_from = match snapshot.transpose() {
        Ok(cluster) => cluster.map(Arc::new),
        Err(err) => {
            eprintln!("baseline: --facts-from: {err}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("baseline: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.serve, work, answers, facts_from)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("baseline: {err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    args: ServeArgs,
    work: Work,
    answers: Answers,
    facts_from: Option<Arc<SnapshotCluster>>,
) -> anyhow::Result<()> {
    let config = args.server_config()?;
    forcegate::certs::ensure_dev_certs(&args.tls_dir, "forcegate", "forcegate")
        .with_context(|| format!("certificates in {}", args.tls_dir.display()))?;
    let answer_count = answers.len();
    let limits = Limits {
        body_limit: config.body_limit,
        request_timeout: config.request_timeout,
        permits: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
        work,
        answers: Arc::new(answers),
        facts_from,
    };
    let router = Router::new()
        .route("/validate", post(allow))
        .route("/mutate", post(allow))
        .route("/healthz", get(ok))
        .route("/readyz", get(ok))
        .with_state(Arc::new(limits));
    // The metrics the listener counts in (TLS handshakes) go unserved.
    let metrics = Metrics::register(&mut Registry::default());
    let shutdown = Shutdown::new();
    let running = server::listen(
        &config,
        None,
        router.clone(),
        router,
        metrics,
        Health::default(),
        shutdown.clone(),
    )
    .await?;
    tracing::info!(
        listen = %running.local_addr(),
        work_iterations = work.iterations,
        answers = answer_count,
        "baseline serving"
    );
    tokio::spawn(async move {
        if server::shutdown::signal().await.is_ok() {
            shutdown.trigger();
        }
    });
    let drained = running.wait().await;
    anyhow::ensure!(drained.is_clean(), "drain incomplete: {drained:?}");
    Ok(())
}

async fn ok() -> &'static str {
    "ok\n"
}

async fn allow(State(limits): State<Arc<Limits>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let answered = tokio::time::timeout(
        limits.request_timeout,
        answer(&limits, &parts.headers, body),
    );
    match answered.await {
        Ok(Ok(bytes)) => json(StatusCode::OK, bytes),
        Ok(Err(bad)) => {
            let status = StatusCode::from_u16(bad.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            let body = serde_json::json!({"error": bad.to_string(), "reason": bad.reason()});
            json(status, body.to_string().into_bytes())
        }
        Err(_) => json(
            StatusCode::SERVICE_UNAVAILABLE,
            b"{\"reason\":\"timeout\"}".to_vec(),
        ),
    }
}

async fn answer(limits: &Limits, headers: &HeaderMap, body: Body) -> Result<Vec<u8>, BadReview> {
    // From the start of the handler, as `serve` times its decision line.
    let started = Instant::now();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        return Err(BadReview::WrongContentType {
            found: content_type,
        });
    }
    let _permit = limits.permits.acquire().await.ok();
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| BadReview::BodyRead(err.to_string()))?;
        if bytes.len() + chunk.len() > limits.body_limit {
            return Err(BadReview::TooLarge {
                limit: limits.body_limit,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    let request = admission::decode(&bytes)?;
    limits.work.run();
    if let Some(cluster) = &limits.facts_from {
        gather_facts(&request, cluster.as_ref());
    }
    let answer = limits.answers.get(&request.uid);
    let allow = Decision::allow();
    let decision = answer.map_or(&allow, |answer| &answer.decision);
    let response = admission::respond(&request, decision, None);
    if let Some(answer) = answer.filter(|answer| !answer.intent.is_empty()) {
        log_like_serve(&request, answer, started.elapsed());
    }
    Ok(admission::encode(&response))
}

/// What `serve` does before evaluating policies: classify, then (for gated
/// intents) read the facts the shipped policies and the cleanup record use.
fn gather_facts(request: &admission::Request, cluster: &SnapshotCluster) {
    let intent = intent::classify(request);
    if intent.kind.is_gated() {
        let facts = facts::gather_for(
            &intent,
            request,
            cluster,
            Timestamp::now(),
            Needs::default(),
        );
        std::hint::black_box(facts);
    }
    std::hint::black_box(intent);
}

/// The line `serve` logs for a gated decision: same fields, same sizes,
/// same target (so the default filter, `forcegate=info`, lets it through),
/// and like serve's the object and policies written as strings.
fn log_like_serve(request: &admission::Request, answer: &Answer, elapsed: Duration) {
    let duration_ms = (elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0;
    let mut object = String::with_capacity(64);
    object.push_str(&request.resource.resource);
    object.push(' ');
    if let Some(ns) = &request.namespace {
        object.push_str(ns);
        object.push('/');
    }
    object.push_str(&request.name);
    tracing::info!(
        target: "forcegate::server::routes",
        uid = request.uid.as_str(),
        endpoint = "validate",
        intent = answer.intent.as_str(),
        user = request.user_info.username.as_deref().unwrap_or_default(),
        object = object.as_str(),
        decision = if answer.decision.allowed { "allowed" } else { "denied" },
        policies = answer.policies.as_str(),
        record = "",
        break_glass = false,
        dry_run = request.dry_run,
        duration_ms,
        "admission decision"
    );
}

fn json(status: StatusCode, body: Vec<u8>) -> Response {
    let content_type = [(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    )];
    (status, content_type, body).into_response()
}
