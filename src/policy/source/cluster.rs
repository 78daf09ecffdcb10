//! The live policy source: a watch on ForceDeletionPolicy objects. Each
//! change is compiled as it arrives and the set in force swapped at once,
//! so an edit applies within the watch's latency (milliseconds), a
//! deleted policy stops applying, and a generation that does not compile
//! leaves the last good one in force, is counted as a failed reload and
//! logged with the reason.
//!
//! Until the first list completes the set is [`PolicySet::not_loaded`]:
//! candidates are denied as undecidable and readiness stays false.

use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use futures::StreamExt;
use kube::Client;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::store::{Changed, Store};
use crate::policy::crd::ForceDeletionPolicy;
use crate::policy::{PolicyMetrics, PolicySet};

/// Why candidates are undecidable before the first list.
pub const NOT_LISTED: &str = "ForceDeletionPolicy objects not listed from the API server yet";

/// The store, the set in force, and a counter that moves on every change
/// (what the reporter and the status writer wait on).
#[derive(Debug)]
pub struct Live {
    store: Mutex<Store>,
    policies: Arc<ArcSwap<PolicySet>>,
    changes: watch::Sender<u64>,
    metrics: PolicyMetrics,
}

impl Live {
    pub fn new(metrics: PolicyMetrics) -> Arc<Live> {
        Arc::new(Live {
            store: Mutex::new(Store::default()),
            policies: Arc::new(ArcSwap::from_pointee(PolicySet::not_loaded(NOT_LISTED))),
            changes: watch::Sender::new(0),
            metrics,
        })
    }

    /// The set in force, for the engine.
    pub fn policies(&self) -> Arc<ArcSwap<PolicySet>> {
        self.policies.clone()
    }

    /// The store as it is now. Hold it briefly, never across an await or
    /// a second call (a std mutex: the watch and the server wait on it).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding it leaves a consistent store: every change
        // is one insert or remove.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes on every change after the call.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Apply one watch event. Returns true when it completed the first list.
    pub fn handle(&self, event: Event<ForceDeletionPolicy>) -> bool {
        let mut store = self.store();
        let was_synced = store.is_synced();
        let changed = match event {
            Event::Init => {
                store.relist();
                Changed::default()
            }
            Event::InitApply(object) | Event::Apply(object) => store.apply(object),
            Event::Delete(object) => store.delete(object.metadata.name.as_deref().unwrap_or("")),
            Event::InitDone => store.listed(),
        };
        if let Some((name, error)) = &changed.failed {
            self.metrics.reload_failed();
            let kept = store
                .entries()
                .find(|e| e.object.metadata.name.as_deref() == Some(name))
                .and_then(|e| e.in_force.as_ref().map(|(g, _)| *g));
            tracing::error!(
                policy = %name,
                error = %error,
                kept_generation = ?kept,
                "policy generation does not compile; the last good generation stays in force"
            );
        }
        if changed.set && store.is_synced() {
            let set = store.set();
            tracing::info!(policies = ?set.names(), "policies in force");
            self.metrics.loaded(set.len());
            self.policies.store(Arc::new(set));
        }
        let listed = !was_synced && store.is_synced();
        drop(store);
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
        listed
    }
}

/// Watch the policy objects until the task is aborted; `on_listed` runs
/// once, when the first list is in force.
pub fn spawn(
    client: Client,
    live: Arc<Live>,
    on_listed: impl FnOnce() + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let api: Api<ForceDeletionPolicy> = Api::all(client);
        let mut events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        let mut on_listed = Some(on_listed);
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    if live.handle(event)
                        && let Some(listed) = on_listed.take()
                    {
                        listed();
                    }
                }
                Err(err) => {
                    tracing::warn!(error = %err, "watching ForceDeletionPolicy objects failed; retrying")
                }
            }
        }
    })
}

#[cfg(test)]
mod tests;
