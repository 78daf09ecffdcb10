//! `forcegate records [--phase P]` and `forcegate records show NAME`: the
//! ForceDeletion records (CRD, or `--journal FILE`) and what is still open.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use k8s_openapi::jiff::Timestamp;

use super::oncall::{self, Source, SourceArgs};
use crate::cleanup::{ForceDeletion, journal};
use crate::cluster::ClusterView;
use crate::oncall::records;
use crate::oncall::{OncallError, api, render};

#[derive(Debug, Args)]
pub struct RecordsArgs {
    #[command(subcommand)]
    pub command: Option<RecordsCommand>,
    /// Only records in this phase: Pending, Verifying, Clean, NeedsAttention.
    #[arg(long, global = true)]
    pub phase: Option<String>,
    /// Read a standalone journal instead of the cluster's ForceDeletions;
    /// with --cluster, its checklists are evaluated against the snapshot.
    #[arg(long, global = true, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// A record not Clean this long after the deletion is NeedsAttention
    /// (journal records checked now; the verifier's own setting otherwise).
    #[arg(long, global = true, value_parser = oncall::duration, default_value = "15m")]
    pub deadline: Duration,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Subcommand)]
pub enum RecordsCommand {
    /// One record with every checklist item, its evidence and the node-side commands.
    Show { name: String },
}

pub fn run(args: RecordsArgs) -> ExitCode {
    oncall::exit("records", oncall::block_on(records(args)))
}

async fn records(args: RecordsArgs) -> Result<bool, OncallError> {
    let phase = args
        .phase
        .as_deref()
        .map(records::parse_phase)
        .transpose()?;
    let (all, view) = load(&args).await?;
    let view = view.as_deref();
    let now = Timestamp::now();
    let output = args.source.output;
    match &args.command {
        Some(RecordsCommand::Show { name }) => {
            let detail = records::show(&all, name, view, now, args.deadline)?;
            oncall::print(
                output,
                |style| render::records::show(&detail, style),
                &detail,
            )?;
            Ok(detail.summary.needs_attention())
        }
        None => {
            let summaries = records::list(&all, phase, view, now, args.deadline);
            oncall::print(output, |_| render::records::list(&summaries), &summaries)?;
            Ok(summaries.iter().any(|s| s.needs_attention()))
        }
    }
}

/// The records, and a cluster view to check journal records against.
async fn load(
    args: &RecordsArgs,
) -> Result<(Vec<ForceDeletion>, Option<Box<dyn ClusterView>>), OncallError> {
    if let Some(path) = &args.journal {
        let records = journal::read(path).map_err(|e| OncallError::Input(e.to_string()))?;
        if args.source.cluster.is_empty() {
            return Ok((records, None));
        }
        let view: Option<Box<dyn ClusterView>> = match args.source.open().await? {
            Source::Files { view, .. } => Some(view),
            Source::Live(_) => None,
        };
        return Ok((records, view));
    }
    match args.source.open().await? {
        Source::Live(cluster) => Ok((api::records(&cluster).await?, None)),
        Source::Files { view, inventory } => {
            // ForceDeletions saved with `kubectl get forcedeletions -o yaml`.
            let records = (inventory.of_kind("forcegate.dev", "ForceDeletion"))
                .map(|o| serde_json::from_value::<ForceDeletion>(o.clone()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    OncallError::Input(format!(
                        "a ForceDeletion in the snapshot does not decode: {e}"
                    ))
                })?;
            Ok((records, Some(view)))
        }
    }
}
