//! `forcegate explain RESOURCE NAME`: what a force delete, a grace-0
//! eviction or a finalizer strip would get from forcegate right now.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use arc_swap::ArcSwap;
use clap::Args;
use k8s_openapi::jiff::Timestamp;

use super::oncall::{self, Source, SourceArgs};
use crate::cleanup::NoopRecorder;
use crate::cluster::{ClusterView, SnapshotCluster};
use crate::engine::{Engine, Settings};
use crate::oncall::explain::{self, Target, User};
use crate::oncall::{OncallError, api, render, resource};
use crate::policy::PolicySet;

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Resource type, as kubectl takes it: pod, pvc, pv, namespace, widgets.acme.example, ...
    pub resource: String,
    /// Object name.
    pub name: String,
    /// Decide for this user instead of the kubeconfig's (required with --cluster).
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,
    /// Groups of --as (repeatable).
    #[arg(long = "as-group", value_name = "GROUP")]
    pub as_groups: Vec<String>,
    /// The policies forcegate runs (a directory or a file).
    #[arg(long, env = "FORCEGATE_POLICIES", default_value = "policies")]
    pub policies: PathBuf,
    #[arg(long, default_value = "forcegate:break-glass")]
    pub break_glass_group: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub fn run(args: ExplainArgs) -> ExitCode {
    oncall::exit("explain", oncall::block_on(explain(args)))
}

async fn explain(args: ExplainArgs) -> Result<bool, OncallError> {
    let policies = load_policies(&args.policies)?;
    let source = args.source.open().await?;
    let namespace = args.source.namespace(&source);
    let (target, view, user): (Target, Arc<dyn ClusterView>, User) = match source {
        Source::Files { view, inventory } => {
            let types = resource::from_inventory(&inventory);
            let rt = resource::resolve(&args.resource, &types)?;
            let target = resource::find_target(&inventory, rt, &namespace, &args.name)?;
            let user = given_user(&args).ok_or_else(|| {
                OncallError::Input(
                    "with --cluster, say who would act: --as USER [--as-group GROUP]".into(),
                )
            })?;
            (target, Arc::<SnapshotCluster>::from(view), user)
        }
        Source::Live(cluster) => {
            let target = api::target::get(&cluster, &args.resource, &namespace, &args.name).await?;
            let user = match given_user(&args) {
                Some(user) => user,
                None => api::whoami(&cluster).await?,
            };
            // Namespaced kinds in the object's namespace (a namespace: its
            // own contents); cluster-scoped kinds whole.
            let scope = match (&target.namespace, target.resource.as_str()) {
                (Some(ns), _) => Some(ns.clone()),
                (None, "namespaces") if target.group.is_empty() => Some(target.name.clone()),
                (None, _) => None,
            };
            let (view, gaps) = api::view::cluster_view(&cluster, scope.as_deref()).await?;
            oncall::note_gaps("explain", &gaps);
            (target, Arc::new(view), user)
        }
    };
    let settings = Settings {
        break_glass_group: args.break_glass_group.clone(),
        ..Settings::default()
    };
    let engine = Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        view,
        Arc::new(NoopRecorder),
        settings,
    );
    let explanation = explain::explain(&engine, &target, &user, Timestamp::now())?;
    oncall::print(
        args.source.output,
        |style| render::explain::report(&explanation, style),
        &explanation,
    )?;
    Ok(explanation.needs_attention())
}

fn given_user(args: &ExplainArgs) -> Option<User> {
    let username = args.as_user.clone()?;
    let mut groups = args.as_groups.clone();
    if !groups.iter().any(|g| g == "system:authenticated") {
        groups.push("system:authenticated".into());
    }
    Some(User { username, groups })
}

/// A policy directory, or a single file (as `review` takes them).
fn load_policies(path: &PathBuf) -> Result<PolicySet, OncallError> {
    let loaded = if path.is_file() {
        PolicySet::load_files(std::slice::from_ref(path))
    } else {
        PolicySet::load_dir(path)
    };
    loaded.map_err(|e| {
        OncallError::Input(format!(
            "{e} (explain decides with the policies forcegate runs: pass --policies DIR or set FORCEGATE_POLICIES)"
        ))
    })
}
