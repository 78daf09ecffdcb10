//! HTTPS admission server: axum over rustls (ring), health, readiness, metrics.
//!
//! Startable as a library so tests and the end-to-end suite run the real
//! thing: [`Server::new`]`(config, engine).bind()` returns a
//! [`RunningServer`] with the bound addresses (port 0 works) and a shutdown
//! handle. [`router`] is the admission service without TLS or sockets;
//! [`listen`] serves any router over the server's TLS and connection
//! handling.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::engine::Engine;

mod body;
mod client_auth;
pub mod health;
mod listener;
pub mod metrics;
mod routes;
pub mod shutdown;
pub mod tls;

pub use client_auth::ClientAuth;
pub use health::{Health, Readiness};
pub use metrics::Metrics;
pub use routes::{AppState, router};
pub use shutdown::{Drained, Shutdown};
pub use tls::{CertStore, CertificateInfo, TlsError};

/// What kube-apiserver can send at most: an object and its old version,
/// each within etcd's default request limit (1.5 MiB), plus the review
/// around them and JSON's overhead over etcd's encoding (1 MiB).
pub const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Request bodies and their decoded form held in memory at once, as
/// estimated before decoding (see `body.rs`). 64 MiB next to the process's
/// own ~60 MiB (code, runtime, log buffer, watch caches of a mid-size
/// cluster) keeps a burst of the worst bodies well inside the Deployment's
/// 256 MiB; docs/operations.md "Resource limits" derives it.
pub const DEFAULT_BODY_BUDGET: usize = 64 * 1024 * 1024;

/// How the server listens and protects itself.
#[derive(Clone, Debug)]
pub struct Config {
    /// HTTPS: admission, health, readiness (and metrics).
    pub listen: SocketAddr,
    /// Plain HTTP: metrics and health; `None` serves them on HTTPS only.
    pub metrics_listen: Option<SocketAddr>,
    /// Holds `tls.crt` and `tls.key`, hot-reloaded.
    pub tls_dir: PathBuf,
    /// Require client certificates on the HTTPS port.
    pub client_auth: Option<ClientAuth>,
    /// Largest accepted body (413 above).
    pub body_limit: usize,
    /// Estimated bytes of request bodies, decoded, in memory at once; more
    /// wait for room.
    pub body_budget: usize,
    /// Whole-request deadline, from first byte of body to response. Also
    /// bounds the wait for a request head (and so idle HTTP/1.1).
    pub request_timeout: Duration,
    pub handshake_timeout: Duration,
    /// A connection with no request in flight this long is closed.
    pub idle_timeout: Duration,
    /// A connection this old is closed gracefully (h2 GOAWAY) ...
    pub max_connection_age: Duration,
    /// ... and dropped if still open this much later.
    pub connection_age_grace: Duration,
    /// Admissions processed at once; more wait for a slot.
    pub max_concurrency: usize,
    /// Open HTTPS connections at most; accepting pauses above.
    pub max_connections: usize,
    /// Open plain-HTTP (metrics) connections at most, counted apart.
    pub max_metrics_connections: usize,
    /// How long in-flight requests may take to finish after shutdown starts.
    pub shutdown_timeout: Duration,
    /// Quiet period after a certificate directory change before reloading.
    pub reload_debounce: Duration,
    /// Fallback re-read of the certificate directory.
    pub reload_poll: Duration,
}

impl Config {
    /// Defaults matching `forcegate serve`'s flags.
    pub fn new(listen: SocketAddr, tls_dir: impl Into<PathBuf>) -> Self {
        Self {
            listen,
            metrics_listen: None,
            tls_dir: tls_dir.into(),
            client_auth: None,
            body_limit: DEFAULT_BODY_LIMIT,
            body_budget: DEFAULT_BODY_BUDGET,
            request_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
            max_connection_age: Duration::from_secs(600),
            connection_age_grace: Duration::from_secs(30),
            max_concurrency: 256,
            max_connections: 512,
            max_metrics_connections: 64,
            shutdown_timeout: Duration::from_secs(20),
            reload_debounce: Duration::from_millis(250),
            reload_poll: Duration::from_secs(60),
        }
    }

    /// Limits that cannot work together.
    pub fn check(&self) -> Result<(), ServerError> {
        if self.body_budget < self.body_limit {
            return Err(ServerError::Config(format!(
                "the body budget ({} bytes) must hold at least one body of the body limit ({} bytes)",
                self.body_budget, self.body_limit
            )));
        }
        Ok(())
    }
}

/// `host:port`, `[v6]:port`, or `:port` for all IPv4 interfaces.
pub fn parse_addr(text: &str) -> Result<SocketAddr, ServerError> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    full.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| ServerError::Address(text.to_owned()))
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("invalid listen address {0:?} (expected host:port)")]
    Address(String),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// A server ready to bind.
pub struct Server {
    config: Config,
    engine: Arc<Engine>,
    registry: Registry,
    health: Health,
    shutdown: Shutdown,
    pem: Option<PemPair>,
}

/// A serving pair given as PEM: (where it came from, certificate, key).
pub type PemPair = (String, Vec<u8>, Vec<u8>);

impl Server {
    pub fn new(config: Config, engine: Arc<Engine>) -> Self {
        Self {
            config,
            engine,
            registry: Registry::default(),
            health: Health::default(),
            shutdown: Shutdown::new(),
            pem: None,
        }
    }

    /// Serve this pair (PEM) instead of reading `tls_dir`; the caller feeds
    /// later pairs through [`RunningServer::cert_store`] (the Secret watch
    /// of `--manage-certs`).
    pub fn with_certificate_pem(mut self, source: &str, cert: Vec<u8>, key: Vec<u8>) -> Self {
        self.pem = Some((source.to_owned(), cert, key));
        self
    }

    /// Serve this registry on `/metrics` (other modules' metrics already
    /// registered); the server adds its own.
    pub fn with_registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Share readiness switches with the policy loader.
    pub fn with_health(mut self, health: Health) -> Self {
        self.health = health;
        self
    }

    /// Share the shutdown trigger with signal handling and background tasks.
    pub fn with_shutdown(mut self, shutdown: Shutdown) -> Self {
        self.shutdown = shutdown;
        self
    }

    /// Load the certificate, bind the listeners and start serving.
    pub async fn bind(self) -> Result<RunningServer, ServerError> {
        let Server {
            config,
            engine,
            mut registry,
            health,
            shutdown,
            pem,
        } = self;
        let metrics = Metrics::register(&mut registry);
        let state = AppState::new(engine, &config, metrics.clone(), registry, health.clone());
        let state = Arc::new(state);
        let plain = routes::metrics_only(state.clone());
        let https = router(state);
        listen(&config, pem, https, plain, metrics, health, shutdown).await
    }
}

/// Serve `https` over TLS on `config.listen` (the pair `pem`, or the one in
/// `config.tls_dir`, hot-reloaded; client certificates when configured) and
/// `plain` on `config.metrics_listen`, with the connection limits, timeouts
/// and drain `config` sets, until `shutdown` is triggered.
pub async fn listen(
    config: &Config,
    pem: Option<PemPair>,
    https: axum::Router,
    plain: axum::Router,
    metrics: Metrics,
    health: Health,
    shutdown: Shutdown,
) -> Result<RunningServer, ServerError> {
    config.check()?;
    let from_dir = pem.is_none();
    let certs = match pem {
        Some((source, cert, key)) => CertStore::from_pem(&source, cert, key, metrics.tls.clone())?,
        None => CertStore::load(&config.tls_dir, metrics.tls.clone())?,
    };
    let acceptor = Arc::new(client_auth::Acceptor::new(
        certs.clone(),
        config.client_auth.clone(),
    )?);
    let webhook = bind(config.listen).await?;
    let local_addr = local_addr_of(&webhook, config.listen)?;
    let plain_listener = match config.metrics_listen {
        Some(addr) => Some(bind(addr).await?),
        None => None,
    };
    let metrics_addr = match (&plain_listener, config.metrics_listen) {
        (Some(listener), Some(addr)) => Some(local_addr_of(listener, addr)?),
        _ => None,
    };
    // A pair from PEM is fed by its owner; only the client CA is watched.
    let dirs: Vec<_> = from_dir
        .then(|| certs.dir().to_path_buf())
        .into_iter()
        .chain(acceptor.extra_watch_dir())
        .collect();
    let reload = {
        let (certs, acceptor) = (certs.clone(), acceptor.clone());
        move || {
            let _ = certs.reload();
            acceptor.reload_client_ca();
        }
    };
    let reloader = match dirs.is_empty() {
        true => None,
        false => Some(tls::watch(
            dirs,
            reload,
            config.reload_debounce,
            config.reload_poll,
            shutdown.clone(),
        )?),
    };
    let listeners = listener::Listeners {
        webhook,
        webhook_router: https,
        tls: acceptor,
        plain: plain_listener.map(|listener| (listener, plain)),
    };
    tracing::info!(
        listen = %local_addr,
        metrics = ?metrics_addr,
        tls_dir = %config.tls_dir.display(),
        client_auth = config.client_auth.is_some(),
        "serving admission webhook"
    );
    let task = tokio::spawn(listener::run(
        listeners,
        listener::Options::from(config),
        shutdown.clone(),
        health.clone(),
        metrics.clone(),
    ));
    Ok(RunningServer {
        local_addr,
        metrics_addr,
        shutdown,
        health,
        metrics,
        certs,
        task,
        reloader,
    })
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })
}

fn local_addr_of(listener: &TcpListener, addr: SocketAddr) -> Result<SocketAddr, ServerError> {
    listener
        .local_addr()
        .map_err(|source| ServerError::Bind { addr, source })
}

/// A serving server: addresses, live state, and the way to stop it.
pub struct RunningServer {
    local_addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    shutdown: Shutdown,
    health: Health,
    metrics: Metrics,
    certs: Arc<CertStore>,
    task: JoinHandle<Drained>,
    reloader: Option<JoinHandle<()>>,
}

impl RunningServer {
    /// The HTTPS address actually bound (resolves port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The plain-HTTP metrics address, when configured.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// A handle that starts the shutdown (what SIGTERM does).
    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    pub fn health(&self) -> &Health {
        &self.health
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The certificate new handshakes get.
    pub fn certificate(&self) -> CertificateInfo {
        self.certs.current()
    }

    pub fn cert_store(&self) -> &Arc<CertStore> {
        &self.certs
    }

    /// Wait until the server has shut down (triggered elsewhere) and drained.
    pub async fn wait(self) -> Drained {
        let drained = self.task.await.unwrap_or_else(|err| {
            tracing::error!(error = %err, "server task failed");
            Drained {
                abandoned_connections: 0,
                failed: true,
            }
        });
        if let Some(reloader) = self.reloader {
            reloader.abort();
        }
        drained
    }

    /// Start the shutdown and wait for the drain.
    pub async fn shutdown(self) -> Drained {
        self.shutdown.trigger();
        self.wait().await
    }
}
