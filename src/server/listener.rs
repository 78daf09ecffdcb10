//! Accepting connections and serving HTTP on them, until shutdown.
//!
//! One loop accepts on both ports; each connection runs in its own task
//! (TLS handshake under a deadline, then HTTP/1.1 or h2 as negotiated by
//! ALPN) and is registered with the graceful-shutdown tracker *before* the
//! handshake, so the drain waits for connections in any state.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;

use super::Config;
use super::health::Health;
use super::metrics::Metrics;
use super::shutdown::{Drained, Shutdown};

/// h2 keep-alive pings find dead peers on idle multiplexed connections.
const H2_KEEP_ALIVE: Duration = Duration::from_secs(30);
/// Back-off after a failed accept (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub(super) struct Listeners {
    pub webhook: TcpListener,
    pub webhook_router: Router,
    pub tls: TlsAcceptor,
    pub plain: Option<(TcpListener, Router)>,
}

#[derive(Clone, Copy)]
pub(super) struct Options {
    handshake_timeout: Duration,
    header_timeout: Duration,
    max_connections: usize,
    shutdown_timeout: Duration,
}

impl From<&Config> for Options {
    fn from(config: &Config) -> Self {
        Self {
            handshake_timeout: config.handshake_timeout,
            header_timeout: config.request_timeout,
            max_connections: config.max_connections.max(1),
            shutdown_timeout: config.shutdown_timeout,
        }
    }
}

enum Port {
    Webhook,
    Plain,
}

pub(super) async fn run(
    listeners: Listeners,
    options: Options,
    shutdown: Shutdown,
    health: Health,
    metrics: Metrics,
) -> Drained {
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Semaphore::new(options.max_connections));
    let http = Arc::new(http_builder(&options));
    loop {
        let permit = tokio::select! {
            biased;
            _ = shutdown.triggered() => break,
            permit = connections.clone().acquire_owned() => permit,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            biased;
            _ = shutdown.triggered() => break,
            accepted = accept(&listeners) => accepted,
        };
        let (stream, peer, port) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                tracing::warn!(error = %err, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        // Latency over throughput: admission bodies are small.
        let _ = stream.set_nodelay(true);
        let watcher = graceful.watcher();
        match port {
            Port::Webhook => {
                let tls = listeners.tls.clone();
                let router = listeners.webhook_router.clone();
                let http = http.clone();
                let metrics = metrics.clone();
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(options.handshake_timeout, tls.accept(stream));
                    let stream = match handshake.await {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(err)) => {
                            metrics.tls.handshake_failed("error");
                            tracing::debug!(%peer, error = %err, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            metrics.tls.handshake_failed("timeout");
                            tracing::debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    };
                    serve(stream, router, &http, watcher, peer, permit).await;
                });
            }
            Port::Plain => {
                let Some((_, router)) = &listeners.plain else {
                    continue;
                };
                let router = router.clone();
                let http = http.clone();
                tokio::spawn(
                    async move { serve(stream, router, &http, watcher, peer, permit).await },
                );
            }
        }
    }
    health.set_shutting_down();
    // Closing the listeners refuses new connections from here on.
    drop(listeners);
    tracing::info!(
        connections = graceful.count(),
        deadline = ?options.shutdown_timeout,
        "shutting down: draining in-flight requests"
    );
    let drained = tokio::time::timeout(options.shutdown_timeout, graceful.shutdown()).await;
    let abandoned = options.max_connections - connections.available_permits();
    match drained {
        Ok(()) => tracing::info!("drained; all connections closed"),
        Err(_) => tracing::warn!(
            abandoned,
            "drain deadline passed with connections still open"
        ),
    }
    Drained {
        abandoned_connections: if drained.is_ok() { 0 } else { abandoned },
        failed: false,
    }
}

async fn accept(listeners: &Listeners) -> std::io::Result<(TcpStream, SocketAddr, Port)> {
    let plain = async {
        match &listeners.plain {
            Some((listener, _)) => listener.accept().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        accepted = listeners.webhook.accept() => accepted.map(|(s, a)| (s, a, Port::Webhook)),
        accepted = plain => accepted.map(|(s, a)| (s, a, Port::Plain)),
    }
}

fn http_builder(options: &Options) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(H2_KEEP_ALIVE);
    builder
}

async fn serve<S>(
    stream: S,
    router: Router,
    http: &auto::Builder<TokioExecutor>,
    watcher: Watcher,
    peer: SocketAddr,
    _permit: OwnedSemaphorePermit,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
    let connection = http
        .serve_connection(TokioIo::new(stream), service)
        .into_owned();
    if let Err(err) = watcher.watch(connection).await {
        tracing::debug!(%peer, error = %err, "connection closed with an error");
    }
}
