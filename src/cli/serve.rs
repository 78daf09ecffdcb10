//! `forcegate serve`: wire policies, the cluster view, the recorder and the
//! engine into the admission server, then run until SIGTERM/SIGINT.
//!
//! Exit codes: 0 after a clean drain; 1 when the server failed or the drain
//! deadline passed with requests open; 2 for bad configuration (invalid
//! policies, snapshot or addresses), which a restart will not fix.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use arc_swap::ArcSwap;
use prometheus_client::registry::Registry;

use super::ServeArgs;
use crate::certs;
use crate::cleanup::{
    self, CleanupMetrics, JournalRecorder, KubeRecorder, Recorder, VerifierSettings,
};
use crate::cluster::metrics::ClusterMetrics;
use crate::cluster::{ClusterView, LiveCluster, SnapshotCluster};
use crate::engine::{Engine, Settings};
use crate::policy::{self, PolicyMetrics, PolicySet};
use crate::server::{self, Drained, Health, Server, Shutdown};
use crate::{telemetry, tlsmgr};

/// Service and namespace the development certificate is issued for.
const DEV_SERVICE: &str = "forcegate";
const DEV_NAMESPACE: &str = "forcegate";
/// Budget for the ForceDeletion CRD to become Established at start.
const CRD_TIMEOUT: Duration = Duration::from_secs(30);
/// Budget, after the drain, to withdraw this replica's policy report.
const POLICY_SOURCE_STOP: Duration = Duration::from_secs(3);

pub fn run(args: ServeArgs) -> ExitCode {
    let _log_writer = match telemetry::init(args.log_format) {
        Ok(guard) => guard,
        Err(err) => {
            eprintln!("forcegate serve: cannot start the log writer: {err}");
            return ExitCode::FAILURE;
        }
    };
    // kube's client and our server both use rustls; pin the provider once.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("forcegate serve: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(drained) if drained.is_clean() => ExitCode::SUCCESS,
        Ok(drained) => {
            tracing::error!(
                abandoned_connections = drained.abandoned_connections,
                "exiting with requests still open after the drain deadline"
            );
            ExitCode::FAILURE
        }
        Err(fatal) => {
            let (code, err) = match fatal {
                Fatal::Config(err) => (2, err),
                Fatal::Runtime(err) => (1, err),
            };
            tracing::error!(error = format!("{err:#}"), "forcegate serve failed");
            eprintln!("forcegate serve: {err:#}");
            ExitCode::from(code)
        }
    }
}

/// What decisions read and where cleanups go.
type Sources = (Arc<dyn ClusterView>, Arc<dyn Recorder>);

/// Why `serve` could not run: configuration (exit 2) or runtime (exit 1).
enum Fatal {
    Config(anyhow::Error),
    Runtime(anyhow::Error),
}

fn config(err: impl Into<anyhow::Error>) -> Fatal {
    Fatal::Config(err.into())
}

fn runtime(err: impl Into<anyhow::Error>) -> Fatal {
    Fatal::Runtime(err.into())
}

async fn serve(args: ServeArgs) -> Result<Drained, Fatal> {
    let server_config = args.server_config().map_err(config)?;
    let live = args.cluster.trim() == "kube";
    if args.manage_certs && !live {
        return Err(config(anyhow!("--manage-certs needs --cluster kube")));
    }
    if !args.manage_certs {
        ensure_certificate(&args.tls_dir)?;
    }
    let mut registry = Registry::default();
    let shutdown = Shutdown::new();

    let health = Health::default();
    let policy_metrics = PolicyMetrics::register(&mut registry);
    let client = match live {
        true => Some(
            kube::Client::try_default()
                .await
                .context("connecting to the cluster (kubeconfig or in-cluster)")
                .map_err(runtime)?,
        ),
        false => None,
    };
    let (policies, _policy_watch, cluster_source) = match (policy_source(&args), &client) {
        (None, Some(client)) => {
            // Not ready, and every candidate undecidable, until listed.
            health.set_policies_loaded(false);
            let (listed, stop) = (health.clone(), shutdown.clone());
            let identity = (pod_namespace(), pod_identity());
            let on_listed = move || listed.set_policies_loaded(true);
            let stopped = async move { stop.triggered().await };
            let (policies, source) =
                policy::source::start(client, &policy_metrics, identity, on_listed, stopped);
            (policies, None, Some(source))
        }
        (None, None) => {
            return Err(config(anyhow!(
                "--policies crd reads ForceDeletionPolicy objects from the cluster; it needs --cluster kube"
            )));
        }
        (Some(dir), _) => {
            let (policies, watch) = policy_dir(dir, &policy_metrics)?;
            (policies, Some(watch), None)
        }
    };

    let cleanup_metrics = CleanupMetrics::register(&mut registry);
    let (cluster, recorder) = match &client {
        Some(client) => live_sources(client.clone(), &args, cleanup_metrics, &shutdown).await?,
        None => snapshot_sources(&args, cleanup_metrics)?,
    };
    ClusterMetrics::register(&mut registry, cluster.clone());

    let settings = Settings {
        break_glass_group: args.break_glass_group.clone(),
        record_timeout: args.record_timeout,
        deny_without_record: !args.allow_without_record,
    };
    let engine = Arc::new(
        Engine::new(policies, cluster, recorder, settings).with_policy_metrics(policy_metrics),
    );
    let mut server = Server::new(server_config, engine)
        .with_registry(registry)
        .with_health(health.clone())
        .with_shutdown(shutdown.clone());
    tokio::spawn(shutdown_on_signal(shutdown.clone()));
    let mut managed = match (&client, args.manage_certs) {
        (Some(client), true) => {
            let settings = cert_settings(&args);
            Some(tlsmgr::Managed::start(
                client.clone(),
                settings,
                health,
                shutdown.clone(),
            ))
        }
        _ => None,
    };
    if let Some(managed) = managed.as_mut() {
        tracing::info!(source = %managed.feed.source, "waiting for the serving certificate");
        let pair = tokio::select! {
            pair = managed.feed.first() => pair,
            () = shutdown.triggered() => None,
        };
        let Some((cert, key)) = pair else {
            return Ok(Drained {
                abandoned_connections: 0,
                failed: false,
            });
        };
        server = server.with_certificate_pem(&managed.feed.source, cert, key);
    }
    let running = server.bind().await.map_err(|err| match err {
        server::ServerError::Address(_) | server::ServerError::Config(_) => config(err),
        _ => runtime(err),
    })?;
    if let Some(managed) = managed {
        managed.serve_into(running.cert_store().clone());
    }
    let drained = running.wait().await;
    if let Some(source) = cluster_source {
        source.stopped(POLICY_SOURCE_STOP).await;
    }
    Ok(drained)
}

/// The policy directory, or `None` for the cluster's ForceDeletionPolicy
/// objects (`crd`, the default with `--cluster kube`).
fn policy_source(args: &ServeArgs) -> Option<PathBuf> {
    match args.policies.as_deref().map(str::trim) {
        Some("crd") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None if args.cluster.trim() == "kube" => None,
        None => Some(PathBuf::from("policies")),
    }
}

/// Refuse to start on a broken policy directory; once running, a broken
/// edit keeps the last good set in force.
fn policy_dir(
    dir: PathBuf,
    metrics: &PolicyMetrics,
) -> Result<(Arc<ArcSwap<PolicySet>>, policy::watch::WatchHandle), Fatal> {
    let set = PolicySet::load_dir(&dir).map_err(|err| {
        let findings: Vec<String> = err.findings().iter().map(ToString::to_string).collect();
        config(anyhow!("invalid policies:\n  {}", findings.join("\n  ")))
    })?;
    tracing::info!(dir = %dir.display(), policies = ?set.names(), "policies loaded");
    metrics.loaded(set.len());
    let policies = Arc::new(ArcSwap::from_pointee(set));
    let watch = policy::watch::spawn(dir, policies.clone(), metrics.clone()).map_err(runtime)?;
    Ok((policies, watch))
}

/// A serving pair must exist; on a fresh checkout create a development CA
/// and certificate, and say so loudly (they are not for production).
fn ensure_certificate(dir: &std::path::Path) -> Result<(), Fatal> {
    let created = certs::ensure_dev_certs(dir, DEV_SERVICE, DEV_NAMESPACE)
        .with_context(|| format!("creating development certificates in {}", dir.display()))
        .map_err(runtime)?;
    if created {
        tracing::warn!(
            dir = %dir.display(),
            ca = %dir.join(certs::CA_CERT_FILE).display(),
            "no serving certificate found: created a development CA and certificate \
             (use the CA with curl --cacert; run `forcegate certs` for a cluster)"
        );
    }
    Ok(())
}

/// Snapshot files (comma-separated) and a journal for cleanup records.
fn snapshot_sources(args: &ServeArgs, metrics: CleanupMetrics) -> Result<Sources, Fatal> {
    let paths: Vec<PathBuf> = args
        .cluster
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect();
    let snapshot = SnapshotCluster::load(&paths)
        .context("loading the cluster snapshot")
        .map_err(config)?;
    let journal = JournalRecorder::open(&args.journal)
        .with_context(|| format!("opening the cleanup journal {}", args.journal.display()))
        .map_err(runtime)?
        .with_metrics(metrics);
    tracing::info!(journal = %args.journal.display(), "recording cleanups in the journal");
    Ok((Arc::new(snapshot), Arc::new(journal)))
}

/// `--manage-certs`: Secrets and Lease in this pod's namespace.
fn cert_settings(args: &ServeArgs) -> tlsmgr::Settings {
    let mut settings = tlsmgr::Settings::new(&pod_namespace(), &args.service, &pod_identity());
    settings.webhook_selector = args.webhook_selector.clone();
    settings.check_every = args.cert_check_interval;
    settings
}

/// The live cluster: watch caches, the ForceDeletion CRD and its verifier.
async fn live_sources(
    client: kube::Client,
    args: &ServeArgs,
    metrics: CleanupMetrics,
    shutdown: &Shutdown,
) -> Result<Sources, Fatal> {
    // `/readyz` stays false until every kind has synced once.
    let view: Arc<dyn ClusterView> = Arc::new(LiveCluster::start(client.clone(), args.stale_after));
    cleanup::apply_crd(client.clone(), CRD_TIMEOUT)
        .await
        .context("installing the ForceDeletion CRD")
        .map_err(runtime)?;
    let recorder = KubeRecorder::new(client.clone()).with_metrics(metrics.clone());
    let settings = VerifierSettings::new(pod_namespace(), pod_identity(), args.cleanup_deadline);
    let stop = shutdown.clone();
    cleanup::verifier::spawn(client, view.clone(), settings, metrics, async move {
        stop.triggered().await;
    });
    Ok((view, Arc::new(recorder)))
}

/// The namespace holding the verifier's Lease (downward API in the chart).
fn pod_namespace() -> String {
    std::env::var("POD_NAMESPACE").unwrap_or_else(|_| DEV_NAMESPACE.to_owned())
}

fn pod_identity() -> String {
    std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("forcegate-{}", std::process::id()))
}

/// First SIGTERM/SIGINT starts the graceful shutdown; a second one exits
/// at once (an impatient Ctrl-C during the drain).
async fn shutdown_on_signal(shutdown: Shutdown) {
    match server::shutdown::signal().await {
        Ok(name) => tracing::info!(signal = name, "shutting down"),
        Err(err) => {
            tracing::error!(error = %err, "cannot listen for signals; SIGTERM will not drain");
            return;
        }
    }
    shutdown.trigger();
    if let Ok(name) = server::shutdown::signal().await {
        tracing::warn!(signal = name, "second signal: exiting without draining");
        std::process::exit(1);
    }
}

impl ServeArgs {
    /// How the server listens and protects itself, from the flags.
    pub fn server_config(&self) -> Result<server::Config, server::ServerError> {
        let args = self;
        let metrics_listen = match args.metrics_listen.trim() {
            "" => None,
            addr => Some(server::parse_addr(addr)?),
        };
        let client_auth = args
            .client_ca_file
            .as_ref()
            .map(|ca_file| server::ClientAuth {
                ca_file: ca_file.clone(),
                names: args
                    .client_cert_names
                    .iter()
                    .map(|n| n.trim().to_owned())
                    .filter(|n| !n.is_empty())
                    .collect(),
            });
        let config = server::Config {
            metrics_listen,
            client_auth,
            body_limit: args.body_limit,
            body_budget: args.body_budget,
            request_timeout: args.request_timeout,
            handshake_timeout: args.handshake_timeout,
            idle_timeout: args.idle_timeout,
            max_connection_age: args.max_connection_age,
            max_concurrency: args.max_concurrency,
            max_connections: args.max_connections,
            max_metrics_connections: args.max_metrics_connections,
            shutdown_timeout: args.shutdown_timeout,
            ..server::Config::new(server::parse_addr(&args.listen)?, &args.tls_dir)
        };
        config.check()?;
        Ok(config)
    }
}
