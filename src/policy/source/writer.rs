//! The status writer: one replica at a time, elected on the Lease
//! `forcegate-policy-status` (the verifier's election code, its own
//! lease), computes every policy's status from the serving replicas'
//! reports and the permission checks, and patches the status subresource
//! only when the result differs from what the object holds. The field
//! manager names the writing replica (`forcegate/<identity>`).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::channel::oneshot;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::cluster::Live;
use super::permissions::{Checker, kinds_read_by};
use super::roster::{self, EXPIRY};
use crate::cleanup::leader::{self, LeaderSettings, LeaseLock};
use crate::policy::crd::{ForceDeletionPolicy, PolicyStatus};
use crate::policy::status::{self, Permissions, Report, Subject};

/// The status writer's election Lease.
pub const LEASE: &str = "forcegate-policy-status";
/// How often the writer looks again without an event (report expiry,
/// permission re-checks).
const TICK: Duration = Duration::from_secs(5);

/// The reports on the roster Lease, with when each last changed (by this
/// replica's clock: a report unchanged for [`EXPIRY`] is a replica gone).
#[derive(Debug, Default)]
pub struct Roster {
    seen: BTreeMap<String, (Report, Instant)>,
}

impl Roster {
    /// The Lease now holds `reports` (by annotation key).
    pub fn update(&mut self, reports: BTreeMap<String, Report>, now: Instant) {
        let mut seen = BTreeMap::new();
        for (key, report) in reports {
            let since = match self.seen.remove(&key) {
                Some((old, at)) if old == report => at,
                _ => now,
            };
            seen.insert(key, (report, since));
        }
        self.seen = seen;
    }

    /// Reports of the replicas serving now, sorted by replica.
    pub fn serving(&self, now: Instant) -> Vec<Report> {
        let mut reports: Vec<Report> = self
            .seen
            .values()
            .filter(|(_, at)| now.duration_since(*at) < EXPIRY)
            .map(|(report, _)| report.clone())
            .collect();
        reports.sort_by(|a, b| a.replica.cmp(&b.replica));
        reports
    }

    /// Keys of reports left behind by replicas that are gone.
    pub fn expired(&self, now: Instant) -> Vec<String> {
        self.seen
            .iter()
            .filter(|(_, (_, at))| now.duration_since(*at) >= EXPIRY)
            .map(|(key, _)| key.clone())
            .collect()
    }
}

/// Run the election and, while leading, the writer, until `shutdown`.
pub fn spawn(
    client: Client,
    live: Arc<Live>,
    namespace: String,
    identity: String,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let settings = LeaderSettings::new(namespace.clone(), LEASE, identity.clone());
        let lock = LeaseLock::new(client.clone(), settings);
        let work = move |stopped| {
            let writer = Writer::new(client.clone(), &namespace, &identity);
            writer.run(live.clone(), stopped)
        };
        leader::lead(lock, shutdown, work, |_| {}).await;
    })
}

/// What one policy's status is computed from, taken from the store.
struct Pending {
    name: String,
    uid: String,
    generation: i64,
    resource_version: Option<String>,
    spec: Map<String, Value>,
    status: Option<PolicyStatus>,
    /// The kinds its facts read, when this generation compiled.
    kinds: Option<Vec<crate::cluster::Kind>>,
}

struct Writer {
    policies: Api<ForceDeletionPolicy>,
    leases: Api<Lease>,
    params: PatchParams,
    checker: Checker,
    /// What this writer last wrote per uid, and the resourceVersion the
    /// object had before (until the watch shows the write, the store
    /// still holds that older object).
    written: HashMap<String, (Option<String>, PolicyStatus)>,
}

impl Writer {
    fn new(client: Client, namespace: &str, identity: &str) -> Self {
        Self {
            policies: Api::all(client.clone()),
            leases: Api::namespaced(client.clone(), namespace),
            params: PatchParams {
                field_manager: Some(format!("forcegate/{identity}")),
                ..PatchParams::default()
            },
            checker: Checker::new(client),
            written: HashMap::new(),
        }
    }

    async fn run(mut self, live: Arc<Live>, mut stopped: oneshot::Receiver<()>) {
        let config = watcher::Config::default().fields(&format!("metadata.name={}", roster::LEASE));
        let mut leases = watcher::watcher(self.leases.clone(), config)
            .default_backoff()
            .boxed();
        let mut changes = live.subscribe();
        let mut roster = Roster::default();
        loop {
            tokio::select! {
                _ = &mut stopped => return,
                event = leases.next() => match event {
                    Some(Ok(Event::Apply(lease) | Event::InitApply(lease))) => {
                        roster.update(roster::reports(&lease), Instant::now());
                    }
                    Some(Ok(Event::Delete(_))) => roster.update(BTreeMap::new(), Instant::now()),
                    Some(Ok(Event::Init | Event::InitDone)) => {}
                    Some(Err(err)) => tracing::warn!(error = %err, lease = roster::LEASE, "watching the policy reports failed; retrying"),
                    None => return,
                },
                changed = changes.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(TICK) => {}
            }
            // Coalesce bursts (a relist, both replicas reporting at once).
            tokio::time::sleep(Duration::from_millis(100)).await;
            changes.borrow_and_update();
            let synced = live.store().is_synced();
            if synced {
                self.reconcile(&live, &roster).await;
            }
        }
    }

    /// Write every status that differs; drop reports of replicas gone.
    async fn reconcile(&mut self, live: &Live, roster: &Roster) {
        let now = Instant::now();
        let expired = roster.expired(now);
        if !expired.is_empty() {
            let patch = roster::annotations_patch(expired.iter().map(|k| (k.as_str(), None)));
            match self
                .leases
                .patch(roster::LEASE, &self.params, &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    tracing::info!(reports = ?expired, "removed the policy reports of replicas that are gone")
                }
                Err(err) => tracing::warn!(error = %err, "could not remove stale policy reports"),
            }
        }
        let serving = roster.serving(now);
        let pending: Vec<Pending> = live
            .store()
            .entries()
            .map(|entry| Pending {
                name: entry.object.metadata.name.clone().unwrap_or_default(),
                uid: entry.uid.clone(),
                generation: entry.generation,
                resource_version: entry.object.metadata.resource_version.clone(),
                spec: entry.object.spec.fields.clone(),
                status: entry.object.status.clone(),
                kinds: entry
                    .in_force
                    .as_ref()
                    .filter(|(g, _)| *g == entry.generation)
                    .map(|(_, policy)| kinds_read_by(policy)),
            })
            .collect();
        // Forget what concerns policies deleted (or generations edited) since.
        self.written
            .retain(|uid, _| pending.iter().any(|p| p.uid == *uid));
        self.checker.keep(
            pending
                .iter()
                .map(|p| (p.uid.clone(), p.generation))
                .collect(),
        );
        for policy in pending {
            self.write(policy, &serving).await;
        }
    }

    async fn write(&mut self, policy: Pending, serving: &[Report]) {
        let permissions = match &policy.kinds {
            Some(kinds) => {
                self.checker
                    .check(kinds, &policy.uid, policy.generation)
                    .await
            }
            None => Permissions::Unknown(format!(
                "generation {} does not compile, so what it reads is not known",
                policy.generation
            )),
        };
        // Until the watch shows our last write, it is the current status.
        let current = match self.written.get(&policy.uid) {
            Some((before, written)) if *before == policy.resource_version => Some(written),
            _ => policy.status.as_ref(),
        };
        let subject = Subject {
            uid: &policy.uid,
            generation: policy.generation,
            spec: &policy.spec,
        };
        let desired = status::compute(
            subject,
            &policy.name,
            serving,
            &permissions,
            current,
            Timestamp::now(),
        );
        if current == Some(&desired) {
            return;
        }
        let patch = status_patch(policy.status.as_ref(), &desired);
        match self
            .policies
            .patch_status(&policy.name, &self.params, &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                tracing::debug!(policy = %policy.name, generation = policy.generation, "policy status written");
                self.written
                    .insert(policy.uid, (policy.resource_version, desired));
            }
            // Deleted meanwhile: nothing to report on.
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(err) => {
                tracing::warn!(policy = %policy.name, error = %err, "could not write the policy status")
            }
        }
    }
}

/// A merge patch replacing `current` with `desired`: fields `desired`
/// leaves out are removed.
fn status_patch(current: Option<&PolicyStatus>, desired: &PolicyStatus) -> Value {
    let mut status = serde_json::to_value(desired).unwrap_or_default();
    let old = current.and_then(|c| serde_json::to_value(c).ok());
    if let (Some(status), Some(Value::Object(old))) = (status.as_object_mut(), old) {
        for key in old.keys() {
            status.entry(key.clone()).or_insert(Value::Null);
        }
    }
    serde_json::json!({ "status": status })
}

#[cfg(test)]
mod tests;
