//! Liveness and readiness.
//!
//! Ready means a decision made now would be a real one: policies loaded, the
//! cluster view synced, and the process not on its way out. Anything else
//! and the Service should send the API server elsewhere (or let its
//! failurePolicy decide) instead of us answering from half a picture.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::cluster::ClusterView;

/// Shared readiness switches, flipped by the policy loader and shutdown.
#[derive(Clone, Debug)]
pub struct Health {
    inner: Arc<Flags>,
}

#[derive(Debug)]
struct Flags {
    policies_loaded: AtomicBool,
    shutting_down: AtomicBool,
    /// Other parts' reasons not to be ready, by part (e.g. `certificate`).
    blockers: Mutex<BTreeMap<&'static str, String>>,
}

impl Default for Health {
    /// Policies count as loaded: an [`crate::engine::Engine`] only exists
    /// with a validated policy set. Loaders that start empty flip it off.
    fn default() -> Self {
        Self {
            inner: Arc::new(Flags {
                policies_loaded: AtomicBool::new(true),
                shutting_down: AtomicBool::new(false),
                blockers: Mutex::new(BTreeMap::new()),
            }),
        }
    }
}

/// The `/readyz` answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Readiness {
    pub ready: bool,
    /// Why not, one line each (empty when ready).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

impl Health {
    pub fn set_policies_loaded(&self, loaded: bool) {
        self.inner.policies_loaded.store(loaded, Ordering::SeqCst);
    }

    pub fn set_shutting_down(&self) {
        self.inner.shutting_down.store(true, Ordering::SeqCst);
    }

    /// `Some(reason)`: `part` keeps the replica unready; `None` clears it.
    pub fn set_blocker(&self, part: &'static str, reason: Option<String>) {
        let mut blockers = self
            .inner
            .blockers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match reason {
            Some(reason) => blockers.insert(part, reason),
            None => blockers.remove(part),
        };
    }

    pub fn is_shutting_down(&self) -> bool {
        self.inner.shutting_down.load(Ordering::SeqCst)
    }

    /// Readiness now, with every reason it is not ready.
    pub fn readiness(&self, cluster: &dyn ClusterView) -> Readiness {
        let mut reasons = Vec::new();
        if self.is_shutting_down() {
            reasons.push("shutting down".to_owned());
        }
        if !self.inner.policies_loaded.load(Ordering::SeqCst) {
            reasons.push("policies not loaded".to_owned());
        }
        let blockers = self
            .inner
            .blockers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        reasons.extend(blockers.values().cloned());
        drop(blockers);
        if !cluster.is_synced() {
            let before = reasons.len();
            for kind in cluster.status().into_iter().filter(|s| !s.synced) {
                let detail = kind
                    .last_error
                    .map(|err| format!(" ({err})"))
                    .unwrap_or_default();
                reasons.push(format!("{} not synced{detail}", kind.kind));
            }
            if reasons.len() == before {
                reasons.push("cluster view not synced".to_owned());
            }
        }
        Readiness {
            ready: reasons.is_empty(),
            reasons,
        }
    }
}

#[cfg(test)]
mod tests;
