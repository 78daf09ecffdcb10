//! Graceful shutdown: a trigger shared by signal handling, tests and the
//! server's tasks, and the signals that pull it.
//!
//! Order on trigger (see [`super::RunningServer`]): readiness turns false,
//! listeners close (new connections are refused), in-flight requests finish
//! within the drain deadline, then the server reports how the drain went.

use std::sync::Arc;

use tokio::sync::watch;

/// Cloneable shutdown trigger; every clone observes the same state.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    pub fn new() -> Self {
        let (tx, _) = watch::channel(false);
        Self { tx: Arc::new(tx) }
    }

    /// Start shutting down. Idempotent.
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }

    pub fn is_triggered(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves once [`Shutdown::trigger`] has been called (immediately if it was).
    pub async fn triggered(&self) {
        let mut rx = self.tx.subscribe();
        // `wait_for` only errors when the sender is gone, and we hold it.
        let _ = rx.wait_for(|triggered| *triggered).await;
    }
}

/// How the drain after a shutdown went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drained {
    /// Connections still open when the drain deadline passed (0 = clean).
    pub abandoned_connections: usize,
    /// The accept loop itself died (a bug): nothing is known about the drain.
    pub failed: bool,
}

impl Drained {
    pub fn is_clean(&self) -> bool {
        self.abandoned_connections == 0 && !self.failed
    }
}

/// Wait for SIGTERM (what the kubelet sends) or SIGINT (Ctrl-C); returns
/// the signal's name for the log line.
#[cfg(unix)]
pub async fn signal() -> std::io::Result<&'static str> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => Ok("SIGTERM"),
        _ = int.recv() => Ok("SIGINT"),
    }
}

#[cfg(not(unix))]
pub async fn signal() -> std::io::Result<&'static str> {
    tokio::signal::ctrl_c().await?;
    Ok("Ctrl-C")
}

#[cfg(test)]
mod tests;
