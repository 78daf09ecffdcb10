//! Accepting connections and serving HTTP on them, until shutdown.
//!
//! Each port has its own accept loop and its own connection slots, so a
//! flood on the plain metrics port can never take a webhook slot. A loop
//! takes a slot *before* accepting (when all are taken, new connections wait
//! in the kernel's backlog) and the connection holds it until closed, from
//! the TLS handshake (under a deadline) through HTTP/1.1 or h2 as ALPN
//! chose. The drain after shutdown waits for every slot to come back.
//!
//! A connection is closed gracefully (h2 GOAWAY, HTTP/1.1 no keep-alive)
//! when it has had no request in flight for the idle timeout, when it
//! reaches the maximum age, or at shutdown; one that has not finished
//! within the grace period after its age is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use futures::FutureExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use super::Config;
use super::client_auth::{Acceptor, is_client_auth_refusal};
use super::health::Health;
use super::metrics::Metrics;
use super::shutdown::{Drained, Shutdown};

/// h2 keep-alive pings find dead peers on idle multiplexed connections.
const H2_KEEP_ALIVE: Duration = Duration::from_secs(30);
/// h2 flow-control windows (the protocol's initial 64 KiB): the most
/// request body a client can push at one connection before a handler asks
/// for it, so unread bodies cost connections × 64 KiB at most.
const H2_WINDOW: u32 = 65_535;
/// Back-off after a failed accept (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub(super) struct Listeners {
    pub webhook: TcpListener,
    pub webhook_router: Router,
    pub tls: Arc<Acceptor>,
    pub plain: Option<(TcpListener, Router)>,
}

#[derive(Clone, Copy)]
pub(super) struct Options {
    handshake_timeout: Duration,
    header_timeout: Duration,
    idle_timeout: Duration,
    max_age: Duration,
    age_grace: Duration,
    max_connections: usize,
    max_plain_connections: usize,
    shutdown_timeout: Duration,
}

impl From<&Config> for Options {
    fn from(config: &Config) -> Self {
        Self {
            handshake_timeout: config.handshake_timeout,
            header_timeout: config.request_timeout,
            idle_timeout: config.idle_timeout,
            max_age: config.max_connection_age,
            age_grace: config.connection_age_grace,
            max_connections: slots(config.max_connections),
            max_plain_connections: slots(config.max_metrics_connections),
            shutdown_timeout: config.shutdown_timeout,
        }
    }
}

/// At least one; at most what `acquire_many` can wait for.
fn slots(wanted: usize) -> usize {
    wanted.clamp(1, u32::MAX as usize)
}

/// What every connection of the server shares.
struct Shared {
    http: auto::Builder<TokioExecutor>,
    options: Options,
    shutdown: Shutdown,
}

pub(super) async fn run(
    listeners: Listeners,
    options: Options,
    shutdown: Shutdown,
    health: Health,
    metrics: Metrics,
) -> Drained {
    let shared = Arc::new(Shared {
        http: http_builder(&options),
        options,
        shutdown: shutdown.clone(),
    });
    let webhook_slots = Arc::new(Semaphore::new(options.max_connections));
    let plain_slots = Arc::new(Semaphore::new(options.max_plain_connections));
    let Listeners {
        webhook,
        webhook_router,
        tls,
        plain,
    } = listeners;

    let webhook_loop = accept_loop(&webhook, &webhook_slots, &shutdown, |stream, peer, slot| {
        let shared = shared.clone();
        let tls = TlsAcceptor::from(tls.current());
        let router = webhook_router.clone();
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let handshake =
                tokio::time::timeout(shared.options.handshake_timeout, tls.accept(stream));
            let stream = match handshake.await {
                Ok(Ok(stream)) => stream,
                Ok(Err(err)) if is_client_auth_refusal(&err) => {
                    metrics.tls.handshake_failed("client_auth");
                    tracing::debug!(%peer, error = %err, "client certificate refused");
                    return;
                }
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
            serve(stream, router, &shared, peer, slot).await;
        });
    });
    let plain_loop = async {
        match &plain {
            Some((listener, router)) => {
                accept_loop(listener, &plain_slots, &shutdown, |stream, peer, slot| {
                    let shared = shared.clone();
                    let router = router.clone();
                    tokio::spawn(async move { serve(stream, router, &shared, peer, slot).await });
                })
                .await;
            }
            None => shutdown.triggered().await,
        }
    };
    tokio::join!(webhook_loop, plain_loop);

    health.set_shutting_down();
    // Closing the listeners refuses new connections from here on.
    drop((webhook, plain));
    let open = |slots: &Semaphore, max: usize| max - slots.available_permits();
    tracing::info!(
        connections = open(&webhook_slots, options.max_connections)
            + open(&plain_slots, options.max_plain_connections),
        deadline = ?options.shutdown_timeout,
        "shutting down: draining in-flight requests"
    );
    let all_closed = async {
        // Closed only if a semaphore is closed, which we never do.
        let _ = webhook_slots
            .acquire_many(options.max_connections as u32)
            .await;
        let _ = plain_slots
            .acquire_many(options.max_plain_connections as u32)
            .await;
    };
    let drained = tokio::time::timeout(options.shutdown_timeout, all_closed).await;
    let abandoned = open(&webhook_slots, options.max_connections)
        + open(&plain_slots, options.max_plain_connections);
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

/// Accept on `listener` while a slot is free, until shutdown.
async fn accept_loop(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    shutdown: &Shutdown,
    mut handle: impl FnMut(TcpStream, SocketAddr, OwnedSemaphorePermit),
) {
    loop {
        let slot = tokio::select! {
            biased;
            _ = shutdown.triggered() => break,
            slot = slots.clone().acquire_owned() => slot,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            biased;
            _ = shutdown.triggered() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                // Latency over throughput: admission bodies are small.
                let _ = stream.set_nodelay(true);
                handle(stream, peer, slot);
            }
            Err(err) => {
                tracing::warn!(error = %err, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

fn http_builder(options: &Options) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper runs this deadline whenever it waits for a request head,
    // between keep-alive requests too: it also bounds idle HTTP/1.1.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(H2_KEEP_ALIVE)
        .initial_stream_window_size(H2_WINDOW)
        .initial_connection_window_size(H2_WINDOW);
    builder
}

/// Why a connection is being closed on our side.
#[derive(Clone, Copy, Debug)]
enum Closing {
    Shutdown,
    Idle,
    Age,
}

async fn serve<S>(
    stream: S,
    router: Router,
    shared: &Shared,
    peer: SocketAddr,
    _slot: OwnedSemaphorePermit,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let options = &shared.options;
    let activity = Arc::new(Activity::new());
    let service = {
        let activity = activity.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let busy = activity.begin();
            router.clone().oneshot(request).map(move |response| {
                drop(busy);
                response
            })
        })
    };
    let connection = shared
        .http
        .serve_connection(TokioIo::new(stream), service)
        .into_owned();
    tokio::pin!(connection);
    let too_old = tokio::time::sleep(options.max_age);
    tokio::pin!(too_old);
    // Why we are closing, and until when the connection may finish.
    let mut closing: Option<(Closing, Option<Instant>)> = None;
    loop {
        let reason = tokio::select! {
            result = connection.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!(%peer, error = %err, "connection closed with an error");
                }
                return;
            }
            _ = shared.shutdown.triggered(), if closing.is_none() => Closing::Shutdown,
            _ = activity.idle(options.idle_timeout), if closing.is_none() => Closing::Idle,
            _ = &mut too_old, if closing.is_none() => Closing::Age,
            _ = sleep_until(closing.and_then(|(_, at)| at)), if closing.is_some() => {
                tracing::debug!(%peer, reason = ?closing.map(|(why, _)| why), "connection still open after its grace period; dropping it");
                return;
            }
        };
        tracing::trace!(%peer, ?reason, "closing connection gracefully");
        connection.as_mut().graceful_shutdown();
        let until = match reason {
            // The drain's deadline decides, and counts what it abandons.
            Closing::Shutdown => None,
            Closing::Idle | Closing::Age => Some(Instant::now() + options.age_grace),
        };
        closing = Some((reason, until));
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Requests in flight on one connection and when the last one ended.
struct Activity {
    opened: Instant,
    active: AtomicUsize,
    /// Milliseconds after `opened` that the last request ended.
    last_ended: AtomicU64,
}

/// A request in flight; counts as ended when dropped.
struct Busy(Arc<Activity>);

impl Activity {
    fn new() -> Self {
        Self {
            opened: Instant::now(),
            active: AtomicUsize::new(0),
            last_ended: AtomicU64::new(0),
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.active.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// Resolves once nothing has been in flight for `after`.
    async fn idle(&self, after: Duration) {
        loop {
            let last = self.last_ended.load(Ordering::Acquire);
            let due = self.opened + Duration::from_millis(last) + after;
            if Instant::now() < due {
                tokio::time::sleep_until(due).await;
                continue;
            }
            if self.active.load(Ordering::Acquire) == 0 {
                return;
            }
            // Busy: look again once another period has passed.
            tokio::time::sleep(after).await;
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let ended = u64::try_from(self.0.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.last_ended.store(ended, Ordering::Release);
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}
