//! Command line: `serve`, `review`, `test`, `lint`, `certs`, kubectl-style.
//!
//! Exit codes follow DESIGN.md: 0 allowed/ok, 1 denied/failed, 2 bad input or usage.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod certs;
mod lint;
mod review;
mod serve;
mod test;

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
    Serve(ServeArgs),
    /// Decide AdmissionReview requests offline and print the responses.
    Review(ReviewArgs),
    /// Run policy test suites (the PR check).
    Test(TestArgs),
    /// Check policy files for schema and semantic errors.
    Lint(LintArgs),
    /// Write a CA and a serving certificate for the webhook Service.
    Certs(CertsArgs),
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

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    #[default]
    Human,
    Json,
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
    /// Largest accepted request body in bytes (413 above).
    #[arg(long, default_value_t = 8 * 1024 * 1024)]
    pub body_limit: usize,
    /// Per-request deadline in seconds.
    #[arg(long, value_parser = humantime_secs, default_value = "10")]
    pub request_timeout: Duration,
    /// TLS handshake deadline in seconds.
    #[arg(long, value_parser = humantime_secs, default_value = "5")]
    pub handshake_timeout: Duration,
    /// In-flight admission requests at most; more wait.
    #[arg(long, default_value_t = 256)]
    pub max_concurrency: usize,
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

/// Entry point shared by `forcegate` and `kubectl-forcegate`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Review(args) => review::run(args),
        Command::Test(args) => test::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Certs(args) => certs::run(args),
    }
}
