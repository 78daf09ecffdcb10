//! Each replica's report of what it has in force, kept as one annotation
//! per replica on the Lease `forcegate-policy-replicas` in forcegate's
//! namespace. A replica writes its own annotation when its report changes
//! and every [`HEARTBEAT`], and removes it when it stops; the status
//! writer reads them all, and takes a report unchanged for [`EXPIRY`] (by
//! its own clock) for a replica that is gone.
//!
//! One object for all replicas keeps RBAC to one name (`patch` on this
//! Lease); merge patches of different annotation keys never conflict.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::cluster::Live;
use crate::cleanup::kube::FIELD_MANAGER;
use crate::policy::status::Report;

/// The Lease holding the reports.
pub const LEASE: &str = "forcegate-policy-replicas";
/// Annotation key prefix; the name part is the replica's identity.
const PREFIX: &str = "replicas.forcegate.dev/";
/// How often a replica rewrites an unchanged report.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// A report unchanged this long belongs to a replica that is gone.
pub const EXPIRY: Duration = Duration::from_secs(35);

/// The annotation key of `identity`'s report: a qualified name's name part
/// (alphanumerics, `-`, `_`, `.`; at most 63, alphanumeric at both ends).
pub fn key(identity: &str) -> String {
    let mut name: String = identity
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.len() > 63 {
        // Keep the end: pod names differ in their suffix.
        name = name.split_off(name.len() - 63);
    }
    let name = name.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let name = if name.is_empty() { "replica" } else { name };
    format!("{PREFIX}{name}")
}

/// Every report on `lease`, by annotation key; unreadable ones are skipped
/// (and logged), they cannot count for anyone.
pub fn reports(lease: &Lease) -> BTreeMap<String, Report> {
    let annotations = lease.metadata.annotations.iter().flatten();
    annotations
        .filter(|(key, _)| key.starts_with(PREFIX))
        .filter_map(|(key, value)| match serde_json::from_str(value) {
            Ok(report) => Some((key.clone(), report)),
            Err(err) => {
                tracing::warn!(key = %key, error = %err, "unreadable policy report");
                None
            }
        })
        .collect()
}

/// A merge patch setting (`Some`) or removing (`None`) annotations.
pub fn annotations_patch<'a>(
    entries: impl IntoIterator<Item = (&'a str, Option<String>)>,
) -> Value {
    let annotations: serde_json::Map<String, Value> = entries
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.map_or(Value::Null, Value::String)))
        .collect();
    json!({"metadata": {"annotations": annotations}})
}

/// Publishes one replica's report.
pub struct Reporter {
    api: Api<Lease>,
    namespace: String,
    identity: String,
    key: String,
}

impl Reporter {
    pub fn new(client: Client, namespace: &str, identity: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            identity: identity.to_owned(),
            key: key(identity),
        }
    }

    /// Write `report` as this replica's annotation (creating the Lease on
    /// first use).
    pub async fn publish(&self, report: &Report) -> Result<(), kube::Error> {
        let value = serde_json::to_string(report).map_err(kube::Error::SerdeError)?;
        let patch = annotations_patch([(self.key.as_str(), Some(value.clone()))]);
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PatchParams::default()
        };
        match self.api.patch(LEASE, &params, &Patch::Merge(&patch)).await {
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            other => return other.map(drop),
        }
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(LEASE.into()),
                namespace: Some(self.namespace.clone()),
                annotations: Some([(self.key.clone(), value)].into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec::default()),
        };
        let post = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PostParams::default()
        };
        match self.api.create(&post, &lease).await {
            // Another replica created it first: add ours to it.
            Err(kube::Error::Api(status)) if status.is_already_exists() => self
                .api
                .patch(LEASE, &params, &Patch::Merge(&patch))
                .await
                .map(drop),
            other => other.map(drop),
        }
    }

    /// Remove this replica's report (it stops serving).
    pub async fn withdraw(&self) -> Result<(), kube::Error> {
        let patch = annotations_patch([(self.key.as_str(), None)]);
        match self
            .api
            .patch(LEASE, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    /// Report what `live` has in force: once the first list is in force,
    /// then when it changes and every heartbeat (not on status writes,
    /// which change no report); withdraw on `shutdown`.
    pub async fn run(self, live: Arc<Live>, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut changes = live.subscribe();
        let mut published: Option<(Report, Instant)> = None;
        loop {
            let policies = {
                let store = live.store();
                store.is_synced().then(|| store.report())
            };
            let due = match (&policies, &published) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(now), Some((report, at))) => {
                    *now != report.policies || at.elapsed() >= HEARTBEAT
                }
            };
            if let (true, Some(policies)) = (due, policies) {
                let changed = published
                    .as_ref()
                    .is_none_or(|(r, _)| r.policies != policies);
                let report = Report {
                    replica: self.identity.clone(),
                    time: Timestamp::now().to_string(),
                    policies,
                };
                match self.publish(&report).await {
                    Ok(()) => published = Some((report, Instant::now())),
                    Err(err) if changed => {
                        tracing::warn!(error = %err, lease = LEASE, "could not publish this replica's policy report")
                    }
                    Err(err) => tracing::debug!(error = %err, "policy report heartbeat failed"),
                }
            }
            let next = published
                .as_ref()
                .map_or(HEARTBEAT, |(_, at)| HEARTBEAT.saturating_sub(at.elapsed()));
            tokio::select! {
                () = &mut shutdown => break,
                changed = changes.changed() => if changed.is_err() { break },
                () = tokio::time::sleep(next) => {}
            }
            // Coalesce a burst of changes (a relist) into one write.
            tokio::time::sleep(Duration::from_millis(50)).await;
            changes.borrow_and_update();
        }
        if let Err(err) = self.withdraw().await {
            tracing::warn!(error = %err, "could not withdraw this replica's policy report");
        }
    }
}

#[cfg(test)]
mod tests;
