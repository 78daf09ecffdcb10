//! The verifier: re-checks every ForceDeletion until it is Clean.
//!
//! Runs inside `serve` against a live cluster, on one replica at a time (the
//! holder of a Lease, [`super::leader`]). A kube-runtime `Controller` watches
//! the records and calls [`reconcile`], which evaluates the checklist against
//! the shared [`ClusterView`] (the same watch caches admission reads, so no
//! extra API reads per check), writes the status subresource only when it
//! changed, emits an Event on phase changes, and requeues with a backoff that
//! grows with the record's age.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::oneshot;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder as EventRecorder, Reporter};
use kube::runtime::reflector::Store;
use kube::runtime::{Controller, watcher};
use kube::{Client, Resource, ResourceExt};
use tokio::task::JoinHandle;

use super::checklist;
use super::crd::{ForceDeletion, Phase};
use super::kube::FIELD_MANAGER;
use super::leader::{self, LeaderSettings, LeaseLock};
use super::metrics::CleanupMetrics;
use super::status;
use crate::cluster::ClusterView;

#[derive(Clone, Debug)]
pub struct VerifierSettings {
    /// A record not Clean this long after the deletion turns NeedsAttention.
    pub deadline: Duration,
    pub leader: LeaderSettings,
    /// Shortest and longest interval between checks of one record.
    pub min_requeue: Duration,
    pub max_requeue: Duration,
    /// How often the phase gauge is recomputed from the watch cache.
    pub gauge_interval: Duration,
}

impl VerifierSettings {
    /// Lease `forcegate-verifier` in `namespace`, held as `identity`.
    pub fn new(
        namespace: impl Into<String>,
        identity: impl Into<String>,
        deadline: Duration,
    ) -> Self {
        Self {
            deadline,
            leader: LeaderSettings::new(namespace, "forcegate-verifier", identity),
            min_requeue: Duration::from_secs(5),
            max_requeue: Duration::from_secs(120),
            gauge_interval: Duration::from_secs(15),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("updating the status of {record}: {source}")]
    Status {
        record: String,
        #[source]
        source: kube::Error,
    },
}

/// Start the verifier (leader election + controller) until `shutdown`.
pub fn spawn(
    client: Client,
    view: Arc<dyn ClusterView>,
    settings: VerifierSettings,
    metrics: CleanupMetrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let lock = LeaseLock::new(client.clone(), settings.leader.clone());
        let gauge = metrics.clone();
        leader::lead(
            lock,
            shutdown,
            move |stopped| {
                run(
                    client.clone(),
                    view.clone(),
                    settings.clone(),
                    metrics.clone(),
                    stopped,
                )
            },
            move |leading| {
                gauge.set_leader(leading);
                if !leading {
                    gauge.clear_phases();
                }
            },
        )
        .await;
    })
}

struct Context {
    api: Api<ForceDeletion>,
    view: Arc<dyn ClusterView>,
    settings: VerifierSettings,
    metrics: CleanupMetrics,
    events: EventRecorder,
    /// Consecutive API failures per record, for the error backoff.
    failures: Mutex<HashMap<String, u32>>,
}

/// The controller for one term of leadership; returns when `stopped` fires.
async fn run(
    client: Client,
    view: Arc<dyn ClusterView>,
    settings: VerifierSettings,
    metrics: CleanupMetrics,
    stopped: oneshot::Receiver<()>,
) {
    let api: Api<ForceDeletion> = Api::all(client.clone());
    let reporter = Reporter {
        controller: FIELD_MANAGER.into(),
        instance: Some(settings.leader.identity.clone()),
    };
    let controller = Controller::new(api.clone(), watcher::Config::default());
    let gauge = tokio::spawn(report_phases(
        controller.store(),
        metrics.clone(),
        settings.gauge_interval,
    ));
    let context = Arc::new(Context {
        api,
        view,
        settings,
        metrics,
        events: EventRecorder::new(client, reporter),
        failures: Mutex::default(),
    });
    controller
        .graceful_shutdown_on(async move {
            let _ = stopped.await;
        })
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::warn!(error = %err, "verifier controller");
            }
        })
        .await;
    gauge.abort();
    tracing::info!("verifier stopped");
}

/// `forcegate_forcedeletions{phase}` from the controller's cache.
async fn report_phases(store: Store<ForceDeletion>, metrics: CleanupMetrics, every: Duration) {
    let mut ticker = tokio::time::interval(every);
    loop {
        ticker.tick().await;
        let mut counts: HashMap<Phase, i64> = HashMap::new();
        let mut oldest: HashMap<Phase, i64> = HashMap::new();
        for record in store.state() {
            let phase = record.status.as_ref().map(|s| s.phase).unwrap_or_default();
            *counts.entry(phase).or_default() += 1;
            let created = created_at(&record).as_second();
            oldest
                .entry(phase)
                .and_modify(|t| *t = (*t).min(created))
                .or_insert(created);
        }
        metrics.set_phases(&counts.into_iter().collect::<Vec<_>>());
        metrics.set_oldest(&oldest.into_iter().collect::<Vec<_>>());
    }
}

/// When the record was created (its request time if the API server gave none).
fn created_at(record: &ForceDeletion) -> Timestamp {
    record
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(record.spec.requested_at.0, |t| t.0)
}

async fn reconcile(record: Arc<ForceDeletion>, ctx: Arc<Context>) -> Result<Action, VerifyError> {
    let name = record.name_any();
    let current = record.status.clone().unwrap_or_default();
    if current.phase == Phase::Clean {
        ctx.metrics.reconciled("clean");
        return Ok(Action::await_change());
    }
    let now = Timestamp::now();
    let started = created_at(&record);
    let age = now
        .duration_since(started)
        .try_into()
        .unwrap_or(Duration::ZERO);
    let items = checklist::evaluate(&record.spec, ctx.view.as_ref(), now);
    let phase = checklist::phase(&items, age, ctx.settings.deadline);
    let next = status::next(&current, phase, items, age >= ctx.settings.deadline, now);
    if status::changed(&current, &next) {
        let patch = serde_json::json!({
            "status": {
                "phase": next.phase,
                "conditions": next.conditions,
                "checklist": next.checklist,
                "lastChecked": next.last_checked,
            }
        });
        ctx.api
            .patch_status(
                &name,
                &PatchParams::apply(FIELD_MANAGER),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(|source| VerifyError::Status {
                record: name.clone(),
                source,
            })?;
        tracing::info!(record = %name, from = current.phase.as_str(), to = next.phase.as_str(), "cleanup record checked");
        if current.phase != next.phase || record.status.is_none() {
            publish(&ctx, &record, &next).await;
        }
    }
    ctx.failures
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&name);
    ctx.metrics.reconciled("ok");
    let settings = &ctx.settings;
    Ok(
        match status::requeue_after(
            next.phase,
            age,
            settings.deadline,
            settings.min_requeue,
            settings.max_requeue,
        ) {
            Some(after) => Action::requeue(after),
            None => Action::await_change(),
        },
    )
}

async fn publish(ctx: &Context, record: &ForceDeletion, next: &super::crd::ForceDeletionStatus) {
    let type_ = match next.phase {
        Phase::NeedsAttention => EventType::Warning,
        _ => EventType::Normal,
    };
    let event = Event {
        type_,
        reason: next.phase.as_str().to_string(),
        note: Some(status::event_note(next.phase, &next.checklist)),
        action: "Verify".into(),
        secondary: None,
    };
    if let Err(err) = ctx.events.publish(&event, &record.object_ref(&())).await {
        tracing::warn!(record = %record.name_any(), error = %err, "could not publish event");
    }
}

fn error_policy(record: Arc<ForceDeletion>, err: &VerifyError, ctx: Arc<Context>) -> Action {
    let name = record.name_any();
    let failures = {
        let mut map = ctx.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = map.entry(name.clone()).or_default();
        *entry = entry.saturating_add(1);
        *entry
    };
    let after = status::error_backoff(
        failures - 1,
        ctx.settings.min_requeue,
        ctx.settings.max_requeue,
    );
    tracing::warn!(record = %name, error = %err, failures, retry_in = ?after, "verifying cleanup record failed");
    ctx.metrics.reconciled("error");
    Action::requeue(after)
}

#[cfg(test)]
mod tests;
