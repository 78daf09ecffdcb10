//! HTTPS admission server: axum over rustls (ring), health, readiness, metrics.
//!
//! Startable as a library so tests, the end-to-end suite and benchmarks run
//! the real thing: [`Server::new`]`(config, engine).bind()` returns a
//! [`RunningServer`] with the bound addresses (port 0 works) and a shutdown
//! handle.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::cli::ServeArgs;
use crate::engine::Engine;

pub mod health;
mod listener;
pub mod metrics;
mod routes;
pub mod shutdown;
pub mod tls;

pub use health::{Health, Readiness};
pub use metrics::Metrics;
pub use shutdown::{Drained, Shutdown};
pub use tls::{CertStore, CertificateInfo, TlsError};

/// How the server listens and protects itself.
#[derive(Clone, Debug)]
pub struct Config {
    /// HTTPS: admission, health, readiness (and metrics).
    pub listen: SocketAddr,
    /// Plain HTTP: metrics and health; `None` serves them on HTTPS only.
    pub metrics_listen: Option<SocketAddr>,
    /// Holds `tls.crt` and `tls.key`, hot-reloaded.
    pub tls_dir: PathBuf,
    /// Largest accepted body (413 above).
    pub body_limit: usize,
    /// Whole-request deadline, from first byte of body to response.
    pub request_timeout: Duration,
    pub handshake_timeout: Duration,
    /// Admissions processed at once; more wait for a slot.
    pub max_concurrency: usize,
    /// Open connections at most; accepting pauses above.
    pub max_connections: usize,
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
            body_limit: 8 * 1024 * 1024,
            request_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(5),
            max_concurrency: 256,
            max_connections: 4096,
            shutdown_timeout: Duration::from_secs(20),
            reload_debounce: Duration::from_millis(250),
            reload_poll: Duration::from_secs(60),
        }
    }

    pub fn from_args(args: &ServeArgs) -> Result<Self, ServerError> {
        let metrics_listen = match args.metrics_listen.trim() {
            "" => None,
            addr => Some(parse_addr(addr)?),
        };
        Ok(Self {
            metrics_listen,
            body_limit: args.body_limit,
            request_timeout: args.request_timeout,
            handshake_timeout: args.handshake_timeout,
            max_concurrency: args.max_concurrency,
            shutdown_timeout: args.shutdown_timeout,
            ..Self::new(parse_addr(&args.listen)?, &args.tls_dir)
        })
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
    webhook_router: Option<axum::Router>,
    pem: Option<PemPair>,
}

/// A serving pair given as bytes: where it came from, certificate, key.
type PemPair = (String, Vec<u8>, Vec<u8>);

impl Server {
    pub fn new(config: Config, engine: Arc<Engine>) -> Self {
        Self {
            config,
            engine,
            registry: Registry::default(),
            health: Health::default(),
            shutdown: Shutdown::new(),
            webhook_router: None,
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

    /// Serve `router` on the HTTPS port instead of the admission routes,
    /// keeping everything else (TLS, HTTP settings, connection limits,
    /// timeouts, drain). For the bare baseline in `examples/baseline.rs`,
    /// which benchmarks measure `serve` against: only the handler differs.
    pub fn with_webhook_router(mut self, router: axum::Router) -> Self {
        self.webhook_router = Some(router);
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
            webhook_router,
            pem,
        } = self;
        let from_dir = pem.is_none();
        let metrics = Metrics::register(&mut registry);
        let certs = match pem {
            Some((source, cert, key)) => {
                CertStore::from_pem(&source, cert, key, metrics.tls.clone())?
            }
            None => CertStore::load(&config.tls_dir, metrics.tls.clone())?,
        };
        let tls_config = certs.server_config()?;
        let webhook = bind(config.listen).await?;
        let local_addr = local_addr_of(&webhook, config.listen)?;
        let plain = match config.metrics_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let metrics_addr = match (&plain, config.metrics_listen) {
            (Some(listener), Some(addr)) => Some(local_addr_of(listener, addr)?),
            _ => None,
        };
        let reloader = match from_dir {
            true => Some(tls::watch(
                certs.clone(),
                config.reload_debounce,
                config.reload_poll,
                shutdown.clone(),
            )?),
            false => None,
        };
        let state = Arc::new(routes::AppState {
            engine,
            metrics: metrics.clone(),
            registry: Arc::new(registry),
            health: health.clone(),
            body_limit: config.body_limit,
            request_timeout: config.request_timeout,
            permits: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
        });
        let listeners = listener::Listeners {
            webhook,
            webhook_router: webhook_router.unwrap_or_else(|| routes::webhook(state.clone())),
            tls: tokio_rustls::TlsAcceptor::from(tls_config),
            plain: plain.map(|listener| (listener, routes::metrics_only(state))),
        };
        tracing::info!(
            listen = %local_addr,
            metrics = ?metrics_addr,
            tls_dir = %config.tls_dir.display(),
            "serving admission webhook"
        );
        let task = tokio::spawn(listener::run(
            listeners,
            listener::Options::from(&config),
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
    /// The directory watch; `None` when the caller feeds pairs.
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
