//! `forcegate stuck [-A | -n NS] [--older-than 5m]`: everything stuck
//! Terminating, and why.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use k8s_openapi::jiff::Timestamp;

use super::oncall::{self, Source, SourceArgs};
use crate::oncall::evidence::Evidence;
use crate::oncall::stuck::{self, Scope};
use crate::oncall::{OncallError, api, render};

#[derive(Debug, Args)]
pub struct StuckArgs {
    /// Every namespace, and cluster-scoped objects (PVs, namespaces, custom resources).
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,
    /// Only objects Terminating for at least this long (30s, 5m, 2h, 1d).
    #[arg(long, value_parser = oncall::duration, default_value = "5m")]
    pub older_than: Duration,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub fn run(args: StuckArgs) -> ExitCode {
    oncall::exit("stuck", oncall::block_on(stuck(args)))
}

async fn stuck(args: StuckArgs) -> Result<bool, OncallError> {
    let source = args.source.open().await?;
    let namespace = (!args.all_namespaces).then(|| args.source.namespace(&source));
    let inventory = match source {
        Source::Files { inventory, .. } => inventory,
        Source::Live(cluster) => api::inventory::inventory(&cluster, namespace.as_deref()).await?,
    };
    let evidence = Evidence::build(&inventory, Timestamp::now());
    let scope = match &namespace {
        Some(ns) => Scope::Namespace(ns),
        None => Scope::All,
    };
    let report = stuck::diagnose(&evidence, scope, args.older_than);
    oncall::print(
        args.source.output,
        |style| render::stuck::report(&report, style),
        &report,
    )?;
    Ok(report.needs_attention())
}
