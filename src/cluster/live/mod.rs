//! A [`ClusterView`](crate::cluster::ClusterView) kept current by list/watch
//! caches: one task per kind, all feeding one [`Index`].
//!
//! Not ready until every watched kind has completed its first list. After
//! that a kind whose watch has not been heard from for longer than
//! `stale_after` makes the facts depending on it Unknown (so policies apply
//! `onUnknown`), and [`status`](crate::cluster::ClusterView::status) names it.
//! The RBAC it needs is in `docs/rbac.md`.

mod api;
mod state;
mod watch;

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use self::state::KindState;
pub use self::watch::{CallError, Change, Changes, Page, Timing, WatchClient};
use super::index::Index;
use super::kind::Kind;
use super::view::IndexedSource;
use super::{KindStatus, Unknown};

/// How the live source watches.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// A kind not heard from for longer than this makes its facts Unknown.
    pub stale_after: Duration,
    /// Watch ConfigMap and Endpoints metadata for legacy
    /// `control-plane.alpha.kubernetes.io/leader` records (and count them per
    /// namespace). Needs list/watch on both cluster-wide; when off, those
    /// kinds are treated as empty.
    pub legacy_leader_records: bool,
    /// Objects per list page.
    pub page_size: u32,
}

impl LiveOptions {
    pub fn new(stale_after: Duration) -> Self {
        Self {
            stale_after,
            legacy_leader_records: true,
            page_size: 500,
        }
    }
}

/// State shared by the watch tasks (writers) and lookups (readers).
pub struct Shared {
    index: RwLock<Index>,
    kinds: Mutex<Vec<KindState>>,
    stale_after: Duration,
}

impl Shared {
    fn new(watched: &[Kind], stale_after: Duration) -> Self {
        Self {
            index: RwLock::new(Index::new()),
            kinds: Mutex::new(
                Kind::ALL
                    .iter()
                    .map(|k| KindState::new(*k, watched.contains(k)))
                    .collect(),
            ),
            stale_after,
        }
    }

    pub(crate) fn write_index<R>(&self, f: impl FnOnce(&mut Index) -> R) -> R {
        // A panic while holding the lock leaves a consistent-enough index:
        // every mutation is a single apply/delete; keep serving.
        let mut index = self.index.write().unwrap_or_else(|p| p.into_inner());
        f(&mut index)
    }

    fn read_index<R>(&self, f: impl FnOnce(&Index) -> R) -> R {
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        f(&index)
    }

    pub(crate) fn with_state<R>(&self, kind: Kind, f: impl FnOnce(&mut KindState) -> R) -> R {
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut kinds[kind.ordinal()])
    }

    fn states(&self) -> Vec<KindState> {
        self.kinds.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Aborts the watch tasks when the last [`LiveCluster`] handle goes away.
struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The live cluster view. Cheap to clone; watches stop when the last clone
/// is dropped.
#[derive(Clone)]
pub struct LiveCluster {
    shared: Arc<Shared>,
    _tasks: Arc<Tasks>,
}

impl std::fmt::Debug for LiveCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCluster")
            .field("stale_after", &self.shared.stale_after)
            .finish_non_exhaustive()
    }
}

impl LiveCluster {
    /// Start watching every kind with default options. Must be called from
    /// within a Tokio runtime (it spawns one task per kind); returns at once,
    /// see [`ClusterView::is_synced`](crate::cluster::ClusterView::is_synced).
    pub fn start(client: kube::Client, stale_after: Duration) -> LiveCluster {
        Self::start_with(client, LiveOptions::new(stale_after))
    }

    pub fn start_with(client: kube::Client, options: LiveOptions) -> LiveCluster {
        let clients = api::clients(&client, options.legacy_leader_records)
            .into_iter()
            .map(Arc::from)
            .collect();
        Self::from_clients(clients, &options)
    }

    /// Start over arbitrary [`WatchClient`]s (tests use scripted fakes).
    pub fn from_clients(clients: Vec<Arc<dyn WatchClient>>, options: &LiveOptions) -> LiveCluster {
        let timing = Timing::for_stale_after(options.stale_after, options.page_size);
        Self::from_clients_with_timing(clients, options.stale_after, timing)
    }

    fn from_clients_with_timing(
        clients: Vec<Arc<dyn WatchClient>>,
        stale_after: Duration,
        timing: Timing,
    ) -> LiveCluster {
        let watched: Vec<Kind> = clients.iter().map(|c| c.kind()).collect();
        let shared = Arc::new(Shared::new(&watched, stale_after));
        let tasks = clients
            .into_iter()
            .map(|client| tokio::spawn(watch::run(client, shared.clone(), timing)))
            .collect();
        LiveCluster {
            shared,
            _tasks: Arc::new(Tasks(tasks)),
        }
    }

    /// Wait until every watched kind has synced once, or `timeout` passes.
    /// Returns whether it synced.
    pub async fn wait_until_synced(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.ready() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Per-kind status as of `now` (for tests of staleness without waiting).
    pub fn status_at(&self, now: Instant) -> Vec<KindStatus> {
        let states = self.shared.states();
        self.shared.read_index(|index| {
            states
                .iter()
                .map(|s| s.status(now, self.shared.stale_after, index.len(s.kind)))
                .collect()
        })
    }

    fn available_at(&self, kind: Kind, now: Instant) -> Result<(), Unknown> {
        self.shared
            .with_state(kind, |s| s.available(now, self.shared.stale_after))
    }
}

impl IndexedSource for LiveCluster {
    fn read<R>(&self, f: impl FnOnce(&Index) -> R) -> R {
        self.shared.read_index(f)
    }

    fn available(&self, kind: Kind) -> Result<(), Unknown> {
        self.available_at(kind, Instant::now())
    }

    /// Counts need every namespaced kind current: a missing kind would make
    /// a namespace look emptier than it is.
    fn kinds_counted(&self) -> Result<Vec<Kind>, Unknown> {
        let now = Instant::now();
        let states = self.shared.states();
        let mut kinds = Vec::new();
        for state in states.iter().filter(|s| s.kind.namespaced()) {
            state.available(now, self.shared.stale_after)?;
            if state.watched {
                kinds.push(state.kind);
            }
        }
        Ok(kinds)
    }

    fn kind_status(&self) -> Vec<KindStatus> {
        self.status_at(Instant::now())
    }

    fn ready(&self) -> bool {
        self.shared.states().iter().all(|s| !s.watched || s.synced)
    }
}

#[cfg(test)]
mod tests;
