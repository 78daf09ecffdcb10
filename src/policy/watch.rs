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
mod tests {
    use super::*;

    const POLICY: &str = "\
apiVersion: forcegate.dev/v1alpha1
kind: ForceDeletionPolicy
metadata:
  name: NAME
spec:
  match:
    intents: [ForceDelete]
  action: Record
  message: recorded
";

    async fn wait_for(mut check: impl FnMut() -> bool) -> bool {
        for _ in 0..200 {
            if check() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    }

    #[tokio::test]
    async fn reloads_and_keeps_last_good_set_on_broken_edit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, POLICY.replace("NAME", "first")).expect("write");
        let initial = PolicySet::load_dir(dir.path()).expect("initial load");
        let target = Arc::new(ArcSwap::from_pointee(initial));
        let metrics = PolicyMetrics::default();
        let _handle = spawn_with(
            dir.path().to_path_buf(),
            target.clone(),
            metrics.clone(),
            Duration::from_millis(50),
        )
        .expect("watch");

        std::fs::write(&file, POLICY.replace("NAME", "second")).expect("write");
        assert!(
            wait_for(|| target.load().names() == vec!["second"]).await,
            "good edit was not picked up"
        );
        assert!(wait_for(|| metrics.reload_counts().0 >= 1).await);

        // A broken edit: the previous set stays in force and the failure is counted.
        std::fs::write(
            &file,
            POLICY.replace("NAME", "third").replace("Record", "Rekord"),
        )
        .expect("write");
        assert!(
            wait_for(|| metrics.reload_counts().1 >= 1).await,
            "failure not counted"
        );
        assert_eq!(target.load().names(), vec!["second"]);
        let err = PolicySet::load_dir(dir.path()).expect_err("broken");
        assert!(
            err.to_string()
                .contains("a.yaml:8:11: unknown variant `Rekord`"),
            "{err}"
        );

        // Fixing it brings the new set in.
        std::fs::write(&file, POLICY.replace("NAME", "fourth")).expect("write");
        assert!(wait_for(|| target.load().names() == vec!["fourth"]).await);
    }

    #[test]
    fn reload_reports_and_counts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = ArcSwap::from_pointee(PolicySet::default());
        let metrics = PolicyMetrics::default();
        assert!(matches!(
            reload(dir.path(), &target, &metrics),
            Err(PolicyError::Empty { .. })
        ));
        std::fs::write(dir.path().join("p.yaml"), POLICY.replace("NAME", "p")).expect("write");
        assert_eq!(reload(dir.path(), &target, &metrics).expect("loads"), 1);
        assert_eq!(metrics.reload_counts(), (1, 1));
    }
}
