//! Hot reload for `serve`: watch the policy directory, debounce bursts
//! (an editor's save, a ConfigMap's `..data` symlink swap), reload the whole
//! set, and keep the last good set in force when the new one is broken.
//!
//! Readiness is deliberately unaffected by a failed reload: the previous set
//! is still a valid, complete policy, and flapping readiness on a typo would
//! turn a bad commit into an outage.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{PolicyError, PolicyMetrics, PolicySet, load};

/// Quiet time after the last change before reloading.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Keeps the watch alive; dropping it stops watching.
#[derive(Debug)]
pub struct WatchHandle {
    _watcher: RecommendedWatcher,
    task: JoinHandle<()>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Why the directory could not be watched.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {}: {source}", dir.display())]
pub struct WatchError {
    pub dir: PathBuf,
    #[source]
    pub source: notify::Error,
}

/// Watch `dir` and swap reloaded sets into `target`. Must run inside a
/// tokio runtime. The initial load is the caller's (so `serve` can refuse to
/// start on a broken directory).
pub fn spawn(
    dir: PathBuf,
    target: Arc<ArcSwap<PolicySet>>,
    metrics: PolicyMetrics,
) -> Result<WatchHandle, WatchError> {
    spawn_with(dir, target, metrics, DEBOUNCE)
}

/// [`spawn`] with a custom debounce (tests).
pub fn spawn_with(
    dir: PathBuf,
    target: Arc<ArcSwap<PolicySet>>,
    metrics: PolicyMetrics,
    debounce: Duration,
) -> Result<WatchHandle, WatchError> {
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let watched = dir.clone();
    let handler = move |event: notify::Result<notify::Event>| match event {
        Ok(event) if relevant(&event, &watched) => {
            // The receiver only goes away when the handle is dropped.
            let _ = tx.send(());
        }
        Ok(_) => {}
        Err(err) => tracing::warn!(error = %err, "policy watch error"),
    };
    let err = |source| WatchError {
        dir: dir.clone(),
        source,
    };
    let mut watcher = notify::recommended_watcher(handler).map_err(err)?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(err)?;
    let task = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Debounce: wait until the directory has been quiet for a while.
            while let Ok(Some(())) = tokio::time::timeout(debounce, rx.recv()).await {}
            let dir = dir.clone();
            let (target, metrics) = (target.clone(), metrics.clone());
            let reloaded =
                tokio::task::spawn_blocking(move || reload(&dir, &target, &metrics)).await;
            if let Err(err) = reloaded {
                tracing::error!(error = %err, "policy reload task failed");
            }
        }
    });
    Ok(WatchHandle {
        _watcher: watcher,
        task,
    })
}

/// Changes that may alter the set: policy files, and the kubelet's hidden
/// `..data` entries when the directory is a mounted ConfigMap.
fn relevant(event: &notify::Event, dir: &Path) -> bool {
    if matches!(event.kind, EventKind::Access(_)) {
        return false;
    }
    event.paths.iter().any(|path| {
        path == dir
            || load::is_policy_file(path)
            || path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(".."))
    })
}

/// Load `dir` and put it in force; on failure keep what is there.
pub fn reload(
    dir: &Path,
    target: &ArcSwap<PolicySet>,
    metrics: &PolicyMetrics,
) -> Result<usize, PolicyError> {
    match PolicySet::load_dir(dir) {
        Ok(set) => {
            let count = set.len();
            tracing::info!(
                dir = %dir.display(),
                policies = count,
                names = ?set.names(),
                "policies reloaded"
            );
            target.store(Arc::new(set));
            metrics.loaded(count);
            Ok(count)
        }
        Err(err) => {
            let findings: Vec<String> = err.findings().iter().map(ToString::to_string).collect();
            tracing::error!(
                dir = %dir.display(),
                error = %err,
                findings = ?findings,
                kept = target.load().len(),
                "policy reload failed; keeping the previous set in force"
            );
            metrics.reload_failed();
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests;
