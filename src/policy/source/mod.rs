//! ForceDeletionPolicy objects as `serve`'s policy source.
//!
//! - [`store`]: per object, the generation in force (the last one that
//!   compiled) and why a newer one does not.
//! - [`cluster`]: the watch on the objects feeding the store, the set in
//!   force swapped on every change.
//! - [`roster`]: each replica's report of what it has in force, one
//!   annotation per replica on one Lease.
//! - [`writer`]: the status writer, one replica at a time (its own Lease),
//!   writing only what changed; [`permissions`] checks what the policies'
//!   facts need with SelfSubjectAccessReviews.

pub mod cluster;
pub mod permissions;
pub mod roster;
pub mod store;
pub mod writer;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use futures::FutureExt;
use tokio::task::JoinHandle;

use super::{PolicyMetrics, PolicySet};

/// Serve from the cluster's policy objects: watch and compile them,
/// report what is in force, and join the status writer's election.
/// `identity` is (namespace, replica); `on_listed` runs once the first
/// list is in force; the report is withdrawn and the status lease released
/// when `shutdown` resolves (await [`Running::stopped`] for that).
pub fn start(
    client: &kube::Client,
    metrics: &PolicyMetrics,
    (namespace, replica): (String, String),
    on_listed: impl FnOnce() + Send + 'static,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> (Arc<ArcSwap<PolicySet>>, Running) {
    let shutdown = shutdown.boxed().shared();
    let live = cluster::Live::new(metrics.clone());
    let watch = cluster::spawn(client.clone(), live.clone(), on_listed);
    let reporter = roster::Reporter::new(client.clone(), &namespace, &replica);
    let reporter = tokio::spawn(reporter.run(live.clone(), shutdown.clone()));
    let writer = writer::spawn(client.clone(), live.clone(), namespace, replica, shutdown);
    let running = Running {
        watch,
        reporter,
        writer,
    };
    (live.policies(), running)
}

/// The cluster source's tasks.
#[derive(Debug)]
pub struct Running {
    watch: JoinHandle<()>,
    reporter: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Running {
    /// After shutdown: wait at most `within` for the report to be withdrawn
    /// and the status lease released (so the other replicas need not wait
    /// for them to expire), then stop watching.
    pub async fn stopped(self, within: Duration) {
        let finished = async {
            let _ = self.reporter.await;
            let _ = self.writer.await;
        };
        if tokio::time::timeout(within, finished).await.is_err() {
            tracing::warn!(
                ?within,
                "the policy report or status lease was not released in time"
            );
        }
        self.watch.abort();
    }
}
