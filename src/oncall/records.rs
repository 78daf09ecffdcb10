//! `records`: the ForceDeletion records force deletions left behind, with
//! the checklist items still open.
//!
//! A record's status is the verifier's (the CRD, live). Journal records
//! have none: with a cluster view at hand their checklist is evaluated now,
//! exactly as the verifier would (`cleanup::checklist`); without one they
//! show as written.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use serde::Serialize;

use super::OncallError;
use crate::cleanup::{ChecklistItem, ForceDeletion, ItemState, Phase, checklist};
use crate::cluster::ClusterView;

/// Where a record's phase and checklist come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verified {
    /// The verifier's status on the record.
    ByVerifier,
    /// Evaluated now against the cluster view given (journal records).
    Now,
    /// Not verified: no status and no cluster view.
    No,
}

/// One record as `records` shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub name: String,
    /// `Kind namespace/name`.
    pub object: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub requester: String,
    pub age_seconds: i64,
    pub phase: Phase,
    pub verified: Verified,
    /// Checklist items still pending or failed.
    pub open: Vec<String>,
    /// Every checklist item (shown by `records show`).
    #[serde(skip)]
    pub items: Vec<ChecklistItem>,
}

impl Summary {
    /// A failed item, or NeedsAttention: a human must look.
    pub fn needs_attention(&self) -> bool {
        self.phase == Phase::NeedsAttention
            || self.items.iter().any(|i| i.state == ItemState::Failed)
    }
}

/// Parse `--phase` as kubectl users type it (`NeedsAttention`, `needsattention`).
pub fn parse_phase(text: &str) -> Result<Phase, OncallError> {
    Phase::ALL
        .into_iter()
        .find(|p| p.as_str().eq_ignore_ascii_case(text))
        .ok_or_else(|| {
            let names: Vec<&str> = Phase::ALL.iter().map(|p| p.as_str()).collect();
            OncallError::Input(format!(
                "unknown phase {text:?}; one of {}",
                names.join(", ")
            ))
        })
}

/// The phase and checklist of `record` as of `now`.
pub fn summarize(
    record: &ForceDeletion,
    view: Option<&dyn ClusterView>,
    now: Timestamp,
    deadline: Duration,
) -> Summary {
    let requested = record
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(record.spec.requested_at.0, |t| t.0);
    let age_seconds = super::seconds_between(requested, now);
    let (phase, items, verified) = match (&record.status, view) {
        (Some(status), _) => (status.phase, status.checklist.clone(), Verified::ByVerifier),
        (None, Some(view)) => {
            let items = checklist::evaluate(&record.spec, view, now);
            let age = Duration::from_secs(u64::try_from(age_seconds).unwrap_or(0));
            (
                checklist::phase(&items, age, deadline),
                items,
                Verified::Now,
            )
        }
        (None, None) => (Phase::Pending, Vec::new(), Verified::No),
    };
    Summary {
        name: record.name_any(),
        object: record.spec.subject.clone(),
        node: record.spec.node.clone(),
        requester: record.spec.requester.username.clone(),
        age_seconds,
        phase,
        verified,
        open: (items.iter())
            .filter(|i| matches!(i.state, ItemState::Pending | ItemState::Failed))
            .map(|i| i.name.clone())
            .collect(),
        items,
    }
}

/// Every record in `phase` (all when `None`), newest first.
pub fn list(
    records: &[ForceDeletion],
    phase: Option<Phase>,
    view: Option<&dyn ClusterView>,
    now: Timestamp,
    deadline: Duration,
) -> Vec<Summary> {
    let mut summaries: Vec<Summary> = (records.iter())
        .map(|r| summarize(r, view, now, deadline))
        .filter(|s| phase.is_none_or(|p| s.phase == p))
        .collect();
    summaries.sort_by(|a, b| {
        a.age_seconds
            .cmp(&b.age_seconds)
            .then_with(|| a.name.cmp(&b.name))
    });
    summaries
}

/// `records show NAME`: the record and its summary.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    pub record: ForceDeletion,
    pub summary: Summary,
    /// Every checklist item, with its evidence and command.
    pub items: Vec<ChecklistItem>,
}

/// Find `name` among `records`.
pub fn show(
    records: &[ForceDeletion],
    name: &str,
    view: Option<&dyn ClusterView>,
    now: Timestamp,
    deadline: Duration,
) -> Result<Detail, OncallError> {
    let record = (records.iter())
        .find(|r| r.name_any() == name)
        .ok_or_else(|| OncallError::Input(format!("forcedeletion \"{name}\" not found")))?;
    let summary = summarize(record, view, now, deadline);
    Ok(Detail {
        record: record.clone(),
        items: summary.items.clone(),
        summary,
    })
}

#[cfg(test)]
mod tests;
