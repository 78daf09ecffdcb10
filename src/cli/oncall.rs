//! What the on-call commands (`explain`, `stuck`, `records`) share: where
//! the cluster comes from (kubeconfig, kubectl-style, or snapshot files),
//! printing, and exit codes (0 nothing needs attention, 1 something does,
//! 2 bad input or an unreachable cluster, with one line on stderr).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use crate::cluster::SnapshotCluster;
use crate::oncall::OncallError;
use crate::oncall::api::{self, Cluster, Connect};
use crate::oncall::inventory::{Gap, Inventory};
use crate::oncall::render::{self, Format, Style};

/// Where to read the cluster from, as kubectl takes it. Global, so that
/// `records show NAME` takes them after its name too.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Read snapshot files or directories (`kubectl get -o yaml|json` output)
    /// instead of the live cluster.
    #[arg(long, global = true, value_name = "PATH")]
    pub cluster: Vec<PathBuf>,
    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// Namespace (default: the context's, else `default`).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    /// Output format.
    #[arg(
        short = 'o',
        long = "output",
        global = true,
        value_enum,
        default_value = "text"
    )]
    pub output: Format,
}

/// The cluster a command reads.
pub enum Source {
    /// Snapshot files: the view and the raw objects.
    Files {
        view: Box<SnapshotCluster>,
        inventory: Inventory,
    },
    Live(Cluster),
}

impl SourceArgs {
    /// Load the snapshot, or connect (no request yet).
    pub async fn open(&self) -> Result<Source, OncallError> {
        if !self.cluster.is_empty() {
            if self.kubeconfig.is_some() || self.context.is_some() {
                return Err(OncallError::Input(
                    "--cluster reads files: drop --kubeconfig/--context".into(),
                ));
            }
            let view = SnapshotCluster::load(&self.cluster)
                .map_err(|e| OncallError::Input(e.to_string()))?;
            let inventory = Inventory::from_files(view.files())?;
            return Ok(Source::Files {
                view: Box::new(view),
                inventory,
            });
        }
        let connect = Connect {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
        };
        api::connect(&connect).await.map(Source::Live)
    }

    /// `-n`, else the context's namespace (or `default` for files).
    pub fn namespace(&self, source: &Source) -> String {
        match (&self.namespace, source) {
            (Some(ns), _) => ns.clone(),
            (None, Source::Live(cluster)) => cluster.namespace.clone(),
            (None, Source::Files { .. }) => "default".into(),
        }
    }
}

/// Run an on-call command on [`one_shot_runtime`](super::one_shot_runtime).
pub fn block_on<T>(future: impl Future<Output = Result<T, OncallError>>) -> Result<T, OncallError> {
    super::one_shot_runtime()
        .map_err(OncallError::Input)?
        .block_on(future)
}

/// Print `text` for humans, or `value` for scripts; `attention` picks the
/// exit code.
pub fn print(
    format: Format,
    text: impl FnOnce(Style) -> String,
    value: &impl Serialize,
) -> Result<(), OncallError> {
    let out = match format {
        Format::Text => text(Style::detect()),
        structured => render::structured(value, structured)?,
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| OncallError::Input(format!("cannot write the output: {e}")))
}

/// Lists that were refused: said once on stderr (the report stays on stdout).
pub fn note_gaps(command: &str, gaps: &[Gap]) {
    for gap in gaps {
        eprintln!(
            "forcegate {command}: note: could not read {}: {}",
            gap.what, gap.reason
        );
    }
}

/// 0, 1, or 2 with the reason on one line.
pub fn exit(command: &str, result: Result<bool, OncallError>) -> ExitCode {
    match result {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(err) => {
            let line = err.to_string().replace('\n', " ");
            eprintln!("forcegate {command}: {line}");
            ExitCode::from(2)
        }
    }
}

/// `90`, `90s`, `5m`, `2h`, `1d`.
pub fn duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "expected a duration like 30s, 5m, 2h or 1d, got {text:?}"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .map(Duration::from_secs)
        .ok_or_else(|| format!("expected a duration like 30s, 5m, 2h or 1d, got {text:?}"))
}

#[cfg(test)]
mod tests;
