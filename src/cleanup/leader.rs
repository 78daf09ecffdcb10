//! Leader election over a `coordination.k8s.io/v1` Lease, client-go style.
//!
//! One replica acts at a time (the verifier, the certificate manager and
//! the policy status writer, each on a Lease of its own). The holder renews
//! every `retry_period`; it steps down when it has not renewed for
//! `renew_deadline` (shorter than `lease_duration`, so it stops before
//! anyone may take over). A candidate takes over when the record has not
//! changed for
//! `lease_duration` of *its own* monotonic clock, as client-go does, so clock
//! skew between replicas cannot cause two leaders. Writes carry the
//! resourceVersion read, so two candidates cannot both win.

use std::future::Future;
use std::time::{Duration, Instant};

use futures::channel::oneshot;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, PostParams};

use super::kube::FIELD_MANAGER;

#[derive(Clone, Debug)]
pub struct LeaderSettings {
    pub namespace: String,
    pub lease_name: String,
    /// Unique per replica (pod name + random suffix, as client-go does).
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

impl LeaderSettings {
    /// client-go's defaults: 15 s lease, 10 s renew deadline, 2 s retry.
    pub fn new(
        namespace: impl Into<String>,
        lease_name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        Self {
            namespace: namespace.into(),
            lease_name: lease_name.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// What a candidate does with the lease it just read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Create,
    Renew,
    TakeOver,
    /// Someone else holds an unexpired lease.
    Wait {
        holder: String,
    },
}

/// Pure decision: `expired` is whether the record has gone unchanged for
/// the lease duration by the caller's own clock.
pub fn decide(lease: Option<&Lease>, identity: &str, expired: bool) -> Step {
    let Some(lease) = lease else {
        return Step::Create;
    };
    let holder = lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .unwrap_or("");
    if holder == identity {
        Step::Renew
    } else if holder.is_empty() || expired {
        Step::TakeOver
    } else {
        Step::Wait {
            holder: holder.to_string(),
        }
    }
}

/// The record a candidate watches for change: holder and renew time.
type Fingerprint = (Option<String>, Option<Timestamp>, Option<String>);

fn fingerprint(lease: &Lease) -> Fingerprint {
    let spec = lease.spec.as_ref();
    (
        spec.and_then(|s| s.holder_identity.clone()),
        spec.and_then(|s| s.renew_time.as_ref()).map(|t| t.0),
        lease.metadata.resource_version.clone(),
    )
}

pub struct LeaseLock {
    api: Api<Lease>,
    settings: LeaderSettings,
    observed: Option<(Fingerprint, Instant)>,
}

impl LeaseLock {
    pub fn new(client: Client, settings: LeaderSettings) -> Self {
        Self {
            api: Api::namespaced(client, &settings.namespace),
            settings,
            observed: None,
        }
    }

    pub fn settings(&self) -> &LeaderSettings {
        &self.settings
    }

    /// One election round. `Ok(true)`: this replica holds the lease now.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let current = self.api.get_opt(&self.settings.lease_name).await?;
        let expired = match &current {
            Some(lease) => self.observe(lease),
            None => true,
        };
        let step = decide(current.as_ref(), &self.settings.identity, expired);
        let now = MicroTime(Timestamp::now());
        let duration = i32::try_from(self.settings.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PostParams::default()
        };
        let written = match (step, current) {
            (Step::Wait { holder }, _) => {
                tracing::debug!(lease = %self.settings.lease_name, %holder, "lease held by another replica");
                return Ok(false);
            }
            (Step::Create, _) | (_, None) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.settings.lease_name.clone()),
                        namespace: Some(self.settings.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(self.settings.identity.clone()),
                        lease_duration_seconds: Some(duration),
                        acquire_time: Some(now.clone()),
                        renew_time: Some(now),
                        lease_transitions: Some(0),
                        ..LeaseSpec::default()
                    }),
                };
                self.api.create(&params, &lease).await
            }
            (step, Some(mut lease)) => {
                let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
                if step == Step::TakeOver {
                    spec.holder_identity = Some(self.settings.identity.clone());
                    spec.acquire_time = Some(now.clone());
                    spec.lease_transitions =
                        Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
                }
                spec.lease_duration_seconds = Some(duration);
                spec.renew_time = Some(now);
                // resourceVersion from the read makes this a compare-and-swap.
                self.api
                    .replace(&self.settings.lease_name, &params, &lease)
                    .await
            }
        };
        match written {
            Ok(lease) => {
                self.observe(&lease);
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.is_conflict() || status.is_already_exists() => {
                Ok(false)
            }
            Err(err) => Err(err),
        }
    }

    /// Give the lease up on shutdown so another replica takes over at once.
    pub async fn release(&mut self) -> Result<(), kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.settings.lease_name).await? else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.settings.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PostParams::default()
        };
        match self
            .api
            .replace(&self.settings.lease_name, &params, &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.is_conflict() => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// Track when the record last changed; true once it has been still for a
    /// whole lease duration (the holder's own duration when it states one).
    fn observe(&mut self, lease: &Lease) -> bool {
        let print = fingerprint(lease);
        let now = Instant::now();
        let since = match &self.observed {
            Some((seen, at)) if *seen == print => *at,
            _ => {
                self.observed = Some((print, now));
                now
            }
        };
        let duration = lease
            .spec
            .as_ref()
            .and_then(|s| s.lease_duration_seconds)
            .and_then(|s| u64::try_from(s).ok())
            .map(Duration::from_secs)
            .unwrap_or(self.settings.lease_duration);
        now.duration_since(since) >= duration
    }
}

/// Run `work` whenever this replica leads, until `shutdown` resolves.
///
/// `work` gets a receiver that fires when leadership is lost (or on
/// shutdown); it must stop acting and return. `on_change` reports leadership
/// (for metrics). On shutdown the lease is released.
pub async fn lead<W, F>(
    mut lock: LeaseLock,
    shutdown: impl Future<Output = ()>,
    mut work: W,
    on_change: impl Fn(bool),
) where
    W: FnMut(oneshot::Receiver<()>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let settings = lock.settings().clone();
    tokio::pin!(shutdown);
    loop {
        // Candidate: try now, then every retry period.
        loop {
            match lock.try_acquire_or_renew().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(err) => {
                    tracing::warn!(error = %err, lease = %settings.lease_name, "leader election failed")
                }
            }
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(settings.retry_period) => {}
            }
        }
        tracing::info!(identity = %settings.identity, lease = %settings.lease_name, "became leader");
        on_change(true);
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(work(stopped));
        let mut renewed = Instant::now();
        let shutting_down = loop {
            tokio::select! {
                () = &mut shutdown => break true,
                () = tokio::time::sleep(settings.retry_period) => {}
            }
            let budget = settings.renew_deadline.saturating_sub(renewed.elapsed());
            match tokio::time::timeout(budget, lock.try_acquire_or_renew()).await {
                Ok(Ok(true)) => renewed = Instant::now(),
                Ok(Ok(false)) => {
                    tracing::warn!(lease = %settings.lease_name, "lease taken by another replica");
                    break false;
                }
                Ok(Err(err)) => {
                    tracing::warn!(error = %err, lease = %settings.lease_name, "renewing the lease failed")
                }
                Err(_) => {}
            }
            if renewed.elapsed() >= settings.renew_deadline {
                tracing::warn!(lease = %settings.lease_name, "could not renew the lease in time; stepping down");
                break false;
            }
        };
        let _ = stop.send(());
        if let Err(err) = task.await {
            tracing::error!(error = %err, lease = %settings.lease_name, "the leader's task failed");
        }
        on_change(false);
        if shutting_down {
            if let Err(err) = lock.release().await {
                tracing::warn!(error = %err, lease = %settings.lease_name, "could not release the lease");
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests;
