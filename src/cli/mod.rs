//! Command line: `serve`, `review`, `test`, `lint`, `certs`, and the on-call
//! commands `explain`, `stuck`, `records`, kubectl-style.
//!
//! Exit codes follow DESIGN.md: 0 allowed/ok, 1 denied/failed, 2 bad input or usage.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::telemetry::LogFormat;
use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

mod certs;
mod explain;
mod lint;
mod oncall;
mod records;
mod review;
mod serve;
mod stuck;
mod test;

pub use explain::ExplainArgs;
pub use records::{RecordsArgs, RecordsCommand};
pub use stuck::StuckArgs;

#[derive(Debug, Parser)]
#[command(
    name = "forcegate",
    version,
    about = "Gate Kubernetes force deletion with policies and live cluster facts"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the admission webhook server.
    Serve(Box<ServeArgs>),
    /// Decide AdmissionReview requests offline and print the responses.
    Review(ReviewArgs),
    /// Run policy test suites (the PR check).
    Test(TestArgs),
    /// Check policy files for schema and semantic errors.
    Lint(LintArgs),
    /// Write a CA and a serving certificate for the webhook Service.
    Certs(CertsArgs),
    /// What forcegate would decide for a force delete, a grace-0 eviction or a
    /// finalizer strip of an object right now, and the safe path instead.
    Explain(ExplainArgs),
    /// Everything stuck Terminating, and why (from evidence, never from age alone).
    Stuck(StuckArgs),
    /// ForceDeletion records: what force deletions left behind.
    Records(RecordsArgs),
}

/// Output format, kubectl-style `-o`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Output {
    #[default]
    Text,
    Json,
    Yaml,
    Junit,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// HTTPS address for /validate, /mutate, /healthz, /readyz.
    #[arg(long, env = "FORCEGATE_LISTEN", default_value = "127.0.0.1:8443")]
    pub listen: String,
    /// Plain-HTTP address for /metrics (and health), empty to serve metrics on the HTTPS port only.
    #[arg(
        long,
        env = "FORCEGATE_METRICS_LISTEN",
        default_value = "127.0.0.1:9090"
    )]
    pub metrics_listen: String,
    /// Directory with tls.crt and tls.key (a mounted Secret); dev certs are created when missing.
    #[arg(long, env = "FORCEGATE_TLS_DIR", default_value = "certs")]
    pub tls_dir: PathBuf,
    /// PEM bundle of CAs: when set, HTTPS clients must present a certificate chaining to it
    /// (the API server's admission kubeconfig); reloaded when it changes.
    #[arg(long, env = "FORCEGATE_CLIENT_CA_FILE")]
    pub client_ca_file: Option<PathBuf>,
    /// Client certificate names accepted (subject CN or DNS SAN), comma-separated; default any.
    #[arg(long, value_delimiter = ',', requires = "client_ca_file")]
    pub client_cert_names: Vec<String>,
    /// Keep the webhook CA and serving pair in Secrets <service>-ca and
    /// <service>-tls and the caBundle in forcegate's webhook configurations,
    /// renewed ahead of expiry (needs --cluster kube; --tls-dir is unused).
    #[arg(
        long,
        env = "FORCEGATE_MANAGE_CERTS",
        action = ArgAction::Set,
        num_args = 0..=1,
        default_value_t = false,
        default_missing_value = "true"
    )]
    pub manage_certs: bool,
    /// The Service the API server calls: named in the certificate and in
    /// the Secrets of --manage-certs.
    #[arg(long, env = "FORCEGATE_SERVICE", default_value = "forcegate")]
    pub service: String,
    /// Label selector of forcegate's own webhook configurations, whose
    /// caBundle --manage-certs writes and readiness checks.
    #[arg(
        long,
        env = "FORCEGATE_WEBHOOK_SELECTOR",
        default_value = "app.kubernetes.io/name=forcegate"
    )]
    pub webhook_selector: String,
    /// With --manage-certs: check the certificates at least this often (seconds).
    #[arg(long, value_parser = humantime_secs, default_value = "43200")]
    pub cert_check_interval: Duration,
    /// `crd` for the cluster's ForceDeletionPolicy objects (the default
    /// with `--cluster kube`), or a policy directory, watched and
    /// hot-reloaded (default otherwise: `policies`).
    #[arg(long, env = "FORCEGATE_POLICIES")]
    pub policies: Option<String>,
    /// `kube` for the live cluster (kubeconfig or in-cluster), or snapshot files/directories.
    #[arg(long, env = "FORCEGATE_CLUSTER", default_value = "examples/cluster")]
    pub cluster: String,
    /// Journal file for cleanup records when not running against a live cluster.
    #[arg(long, env = "FORCEGATE_JOURNAL", default_value = "forcegate.journal")]
    pub journal: PathBuf,
    /// Group whose members may break glass.
    #[arg(
        long,
        env = "FORCEGATE_BREAK_GLASS_GROUP",
        default_value = "forcegate:break-glass"
    )]
    pub break_glass_group: String,
    /// Allow (with a warning) when a cleanup record cannot be written, instead of denying.
    #[arg(long)]
    pub allow_without_record: bool,
    /// Time budget to write a cleanup record inside one admission call.
    #[arg(long, value_parser = humantime_secs, default_value = "3")]
    pub record_timeout: Duration,
    /// Largest accepted request body in bytes (413 above). The default, 4 MiB, holds what the
    /// API server can send: an object and its old version, each within etcd's default
    /// 1.5 MiB request limit, plus 1 MiB for the review around them and JSON's overhead.
    #[arg(long, default_value_t = crate::server::DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,
    /// Bytes of request bodies held in memory at once, counted as they will be decoded (the
    /// body plus ~100 bytes per JSON item); more wait, a body that alone would exceed it is
    /// refused (413). At least the body limit.
    #[arg(long, default_value_t = crate::server::DEFAULT_BODY_BUDGET)]
    pub body_budget: usize,
    /// Per-request deadline in seconds.
    #[arg(long, value_parser = humantime_secs, default_value = "10")]
    pub request_timeout: Duration,
    /// TLS handshake deadline in seconds.
    #[arg(long, value_parser = humantime_secs, default_value = "5")]
    pub handshake_timeout: Duration,
    /// In-flight admission requests at most; more wait.
    #[arg(long, default_value_t = 256)]
    pub max_concurrency: usize,
    /// Open HTTPS connections at most; more wait in the listen backlog. Each costs ~45 KiB
    /// idle, up to 64 KiB more with an unread h2 body.
    #[arg(long, default_value_t = 512)]
    pub max_connections: usize,
    /// Open plain-HTTP (metrics, health) connections at most, apart from the HTTPS ones.
    #[arg(long, default_value_t = 64)]
    pub max_metrics_connections: usize,
    /// A connection with no request in flight for this many seconds is closed.
    #[arg(long, value_parser = humantime_secs, default_value = "60")]
    pub idle_timeout: Duration,
    /// A connection open this many seconds is closed gracefully (h2 GOAWAY), and dropped
    /// 30 s later if still open.
    #[arg(long, value_parser = humantime_secs, default_value = "600")]
    pub max_connection_age: Duration,
    /// Drain deadline after SIGTERM, in seconds.
    #[arg(long, value_parser = humantime_secs, default_value = "20")]
    pub shutdown_timeout: Duration,
    /// A watched kind without events or resync for this long makes its facts Unknown.
    #[arg(long, value_parser = humantime_secs, default_value = "300")]
    pub stale_after: Duration,
    /// A cleanup record not Clean after this long turns NeedsAttention.
    #[arg(long, value_parser = humantime_secs, default_value = "900")]
    pub cleanup_deadline: Duration,
    #[arg(
        long,
        value_enum,
        env = "FORCEGATE_LOG_FORMAT",
        default_value = "human"
    )]
    pub log_format: LogFormat,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Policy directory.
    #[arg(long, default_value = "policies")]
    pub policies: PathBuf,
    /// Snapshot files or directories (YAML/JSON objects or Lists).
    #[arg(long, required = true)]
    pub cluster: Vec<PathBuf>,
    #[arg(long, default_value = "forcegate:break-glass")]
    pub break_glass_group: String,
    /// Which webhook to emulate.
    #[arg(long, default_value = "validate", value_parser = ["validate", "mutate"])]
    pub endpoint: String,
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Output,
    /// AdmissionReview JSON files, or `-` for standard input.
    #[arg(required = true)]
    pub requests: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Output,
    /// Test suite files or directories (searched for `*_test.yaml` / `*.test.yaml`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Output,
    /// Policy files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CertsArgs {
    /// Service name of the webhook.
    #[arg(long, default_value = "forcegate")]
    pub service: String,
    #[arg(short = 'n', long, default_value = "forcegate")]
    pub namespace: String,
    /// Output directory (tls.crt, tls.key, ca.crt, ca.key).
    #[arg(long, default_value = "certs")]
    pub out: PathBuf,
    /// Validity in days.
    #[arg(long, default_value_t = 365)]
    pub days: u32,
}

fn humantime_secs(s: &str) -> Result<Duration, String> {
    let trimmed = s.trim_end_matches('s');
    trimmed
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("expected seconds, e.g. 5 or 2.5s, got {s:?}"))
}

/// A single-threaded runtime: the one-shot commands make a handful of
/// requests.
fn one_shot_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))
}

/// Entry point shared by `forcegate` and `kubectl-forcegate`.
pub fn main() -> ExitCode {
    let mut command = Cli::command();
    // Run by kubectl as a plugin: help and errors say `kubectl forcegate`.
    let plugin = std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .is_some_and(|p| p.file_stem().is_some_and(|s| s == "kubectl-forcegate"));
    if plugin {
        command = command.bin_name("kubectl forcegate");
    }
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Serve(args) => serve::run(*args),
        Command::Review(args) => review::run(args),
        Command::Test(args) => test::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Certs(args) => certs::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Stuck(args) => stuck::run(args),
        Command::Records(args) => records::run(args),
    }
}
