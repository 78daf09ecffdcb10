//! `explain`: what forcegate would decide for a force delete, a grace-0
//! eviction and a finalizer strip of one object right now, policy by
//! policy, with the facts behind each verdict, what the verifier would
//! find left behind if it were forced anyway, and the safe path instead.
//!
//! No second implementation: each action becomes the AdmissionReview the
//! API server would send ([`reviews`]), decoded, classified and decided by
//! the [`Engine`] the webhook and `forcegate review` run.

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::OncallError;
use crate::admission;
use crate::cleanup::{self, ChecklistItem, checklist};
use crate::cluster::ClusterView;
use crate::decision::PolicyOutcome;
use crate::engine::Engine;
use crate::facts::{self, Facts};
use crate::intent::{self, IntentKind};

mod reviews;
mod safe_path;

pub use reviews::{Action, reviews};
pub use safe_path::{Step, safe_path};

/// The object to explain, as the API server stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural resource, e.g. `pods`.
    pub resource: String,
    pub namespace: Option<String>,
    pub name: String,
    pub object: Value,
}

impl Target {
    fn strings(&self, pointer: &str) -> Vec<String> {
        (self
            .object
            .pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten())
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect()
    }

    /// `metadata.finalizers`.
    pub fn finalizers(&self) -> Vec<String> {
        self.strings("/metadata/finalizers")
    }

    /// A namespace's `spec.finalizers`.
    pub fn spec_finalizers(&self) -> Vec<String> {
        self.strings("/spec/finalizers")
    }

    pub fn uid(&self) -> Option<&str> {
        self.object.pointer("/metadata/uid").and_then(Value::as_str)
    }

    /// What the API server sends as `request.namespace`: a namespace's own
    /// name for requests on it.
    fn request_namespace(&self) -> Option<&str> {
        if self.group.is_empty() && self.resource == "namespaces" {
            Some(&self.name)
        } else {
            self.namespace.as_deref()
        }
    }

    /// `resource.group` as kubectl accepts it.
    pub fn resource_arg(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// Who would act.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct User {
    pub username: String,
    pub groups: Vec<String>,
}

/// One policy's verdict on one action: the rules that fired, or none.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyVerdict {
    pub policy: String,
    /// Empty: the policy did not fire (it does not match, or its
    /// conditions do not hold).
    pub fired: Vec<PolicyOutcome>,
}

/// What forcegate would decide for one action.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionReport {
    pub action: Action,
    pub command: String,
    /// The intent forcegate classifies the request as.
    pub intent: String,
    /// Why policies do not run (not gated, or system finalization).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_gated: Option<String>,
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub break_glass: Option<String>,
    /// Allowed, and a cleanup record would be written and verified.
    pub record: bool,
    pub policies: Vec<PolicyVerdict>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the verifier would open if it were forced anyway.
    pub left_behind: Vec<ChecklistItem>,
    /// Every fact group (also those no loaded policy reads).
    pub facts: Facts,
}

impl ActionReport {
    fn gated(&self) -> bool {
        self.not_gated.is_none()
    }
}

/// The whole answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    pub finalizers: Vec<String>,
    pub user: User,
    pub actions: Vec<ActionReport>,
    /// For a pod: the Leases it holds and when each was last renewed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leases: Vec<LeaseRenewal>,
    pub safe_path: Vec<Step>,
}

/// A Lease a pod holds, and how recently its holder renewed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseRenewal {
    pub namespace: String,
    pub name: String,
    pub holder: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renewed_seconds_ago: Option<i64>,
}

impl Explanation {
    /// Forcing it would be denied or leave something to clean up: exit 1.
    pub fn needs_attention(&self) -> bool {
        self.actions
            .iter()
            .any(|a| a.gated() && (!a.allowed || a.record))
    }
}

/// Decide every action on `target` for `user` with `engine`.
pub fn explain(
    engine: &Engine,
    target: &Target,
    user: &User,
    now: Timestamp,
) -> Result<Explanation, OncallError> {
    let names: Vec<String> = {
        let set = engine.policies().load();
        set.names().into_iter().map(str::to_owned).collect()
    };
    let mut actions = Vec::new();
    for (action, review) in reviews(target, user) {
        let body = serde_json::to_vec(&review).map_err(|e| OncallError::Input(e.to_string()))?;
        actions.push(decide(engine, target, action, &body, &names, now)?);
    }
    let safe_path = safe_path(target, &actions);
    let leases = match (actions.first(), target.namespace.as_deref()) {
        (Some(first), Some(ns)) if first.action == Action::ForceDelete => {
            lease_renewals(engine.cluster().as_ref(), ns, &target.name, now)
        }
        _ => Vec::new(),
    };
    Ok(Explanation {
        kind: target.kind.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        uid: target.uid().map(str::to_owned),
        finalizers: [target.finalizers(), target.spec_finalizers()].concat(),
        user: user.clone(),
        actions,
        leases,
        safe_path,
    })
}

fn lease_renewals(
    view: &dyn ClusterView,
    namespace: &str,
    pod: &str,
    now: Timestamp,
) -> Vec<LeaseRenewal> {
    let held = view.leases_held_by(namespace, pod).unwrap_or_default();
    (held.iter())
        .map(|lease| LeaseRenewal {
            namespace: lease.meta.namespace.clone(),
            name: lease.meta.name.clone(),
            holder: lease.holder.clone().unwrap_or_default(),
            renewed_seconds_ago: lease.renew_time.map(|t| super::seconds_between(t, now)),
        })
        .collect()
}

fn decide(
    engine: &Engine,
    target: &Target,
    action: Action,
    body: &[u8],
    names: &[String],
    now: Timestamp,
) -> Result<ActionReport, OncallError> {
    let request = admission::decode(body)
        .map_err(|e| OncallError::Input(format!("{} of {}: {e}", action.title(), target.name)))?;
    let intent = intent::classify(&request);
    let (engine_facts, decision) = engine.decide(&intent, &request);
    let not_gated = match &intent.kind {
        IntentKind::NotGated { reason } => Some(reason.clone()),
        IntentKind::SystemFinalization { actor } => {
            Some(format!("system finalization ({actor:?}): never gated"))
        }
        _ => None,
    };
    let view = engine.cluster().as_ref();
    let left_behind = if not_gated.is_none() {
        let spec = cleanup::plan(&intent, &engine_facts, &decision, now);
        // Before the deletion the object trivially still exists.
        (checklist::evaluate(&spec, view, now).into_iter())
            .filter(|item| item.name != "object-gone")
            .collect()
    } else {
        Vec::new()
    };
    let policies = (names.iter())
        .map(|name| PolicyVerdict {
            policy: name.clone(),
            fired: (decision.outcomes.iter())
                .filter(|o| *o.policy == **name)
                .cloned()
                .collect(),
        })
        .collect();
    Ok(ActionReport {
        action,
        command: action.command(target),
        intent: intent.kind.name().to_owned(),
        not_gated,
        allowed: decision.allowed,
        break_glass: decision.break_glass.clone(),
        record: decision.allowed && decision.record,
        policies,
        message: decision.message.clone(),
        warnings: decision.warnings.clone(),
        left_behind,
        facts: facts::gather(&intent, &request, view, now),
    })
}

#[cfg(test)]
mod tests;
