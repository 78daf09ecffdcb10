//! What the status writer puts on a ForceDeletionPolicy, from what every
//! serving replica reports it has in force. Pure: the writer (in
//! [`super::source::writer`]) gathers the inputs and writes the result
//! only when it differs from what the object holds.
//!
//! - `Ready`: True when every serving replica has this generation in
//!   force; False with the compile error when some replica's copy of it
//!   does not compile (that replica keeps its last good generation), or
//!   while some replica has not compiled it yet; Unknown with no replica.
//! - `PermissionsGranted`: False naming each resource forcegate's service
//!   account cannot list and watch although the policy's facts need it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::crd::{PolicyCondition, PolicyStatus, ReplicaPolicyStatus};

pub const READY: &str = "Ready";
pub const PERMISSIONS_GRANTED: &str = "PermissionsGranted";

/// Longest compile error a report or condition carries.
const MAX_ERROR: usize = 1024;

/// One replica's report: what it has in force, by policy name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The replica's identity (its pod name).
    pub replica: String,
    /// When it wrote the report (every heartbeat changes it).
    pub time: String,
    pub policies: BTreeMap<String, Compiled>,
}

/// What a replica made of one policy object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compiled {
    pub uid: String,
    /// The generation in force; `None` when none ever compiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// The latest generation seen.
    pub observed: i64,
    /// Why `observed` does not compile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Compiled {
    /// A compile error cut to what a report and a condition carry.
    pub fn short(error: &str) -> String {
        if error.len() <= MAX_ERROR {
            return error.to_owned();
        }
        let mut end = MAX_ERROR - '…'.len_utf8();
        while !error.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &error[..end])
    }
}

/// Whether forcegate may read what a policy's facts come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Permissions {
    /// Every needed resource may be listed and watched.
    Granted,
    /// These (`resource.group`) may not be.
    Missing(Vec<String>),
    /// Not checked (the policy has no compiled generation, or the check
    /// failed), and why.
    Unknown(String),
}

/// The object the status is for.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub uid: &'a str,
    pub generation: i64,
    /// The spec as stored, for the printer columns' summary.
    pub spec: &'a Map<String, Value>,
}

/// The status `subject` should carry, given the reports of the replicas
/// serving now (`replicas`, by identity). Conditions keep their transition
/// time while their status holds, so an unchanged result compares equal to
/// `current` and causes no write.
pub fn compute(
    subject: Subject<'_>,
    name: &str,
    replicas: &[Report],
    permissions: &Permissions,
    current: Option<&PolicyStatus>,
    now: Timestamp,
) -> PolicyStatus {
    let generation = subject.generation;
    let views: Vec<(&str, Option<&Compiled>)> = replicas
        .iter()
        .map(|r| {
            let compiled = r.policies.get(name).filter(|c| c.uid == subject.uid);
            (r.replica.as_str(), compiled)
        })
        .collect();
    let failed: Vec<(&str, &str)> = views
        .iter()
        .filter_map(|(replica, c)| {
            let c = c.filter(|c| c.observed == generation)?;
            Some((*replica, c.error.as_deref()?))
        })
        .collect();
    let waiting: Vec<&str> = views
        .iter()
        .filter(|(_, c)| c.is_none_or(|c| c.observed < generation))
        .map(|(replica, _)| *replica)
        .collect();
    let names: Vec<&str> = views.iter().map(|(replica, _)| *replica).collect();
    let (status, reason, message) = if views.is_empty() {
        (
            "Unknown",
            "NoReplicas",
            "no forcegate replica serving from ForceDeletionPolicy objects has reported".to_owned(),
        )
    } else if let Some((_, error)) = failed.first() {
        let replicas: Vec<&str> = failed.iter().map(|(r, _)| *r).collect();
        (
            "False",
            "CompileFailed",
            format!(
                "generation {generation} does not compile on {}; the last good generation stays in force: {error}",
                replicas.join(", ")
            ),
        )
    } else if !waiting.is_empty() {
        (
            "False",
            "Pending",
            format!(
                "waiting for {} to compile generation {generation}",
                waiting.join(", ")
            ),
        )
    } else {
        (
            "True",
            "InForce",
            format!(
                "generation {generation} is in force on {} replica{}: {}",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            ),
        )
    };
    let ready = condition(current, READY, status, reason, message, generation, now);
    let (status, reason, message) = match permissions {
        Permissions::Granted => (
            "True",
            "Granted",
            "forcegate may list and watch everything the policy's facts read".to_owned(),
        ),
        Permissions::Missing(resources) => (
            "False",
            "Forbidden",
            format!(
                "forcegate's service account cannot list/watch {}: facts read from it stay \
                 unknown and the policy's onUnknown decides",
                resources.join(", ")
            ),
        ),
        Permissions::Unknown(why) => ("Unknown", "NotChecked", why.clone()),
    };
    let permitted = condition(
        current,
        PERMISSIONS_GRANTED,
        status,
        reason,
        message,
        generation,
        now,
    );
    let (intents, actions, on_unknown) = summary(subject.spec);
    PolicyStatus {
        observed_generation: Some(generation),
        intents,
        actions,
        on_unknown,
        conditions: vec![ready, permitted],
        replicas: views
            .iter()
            .map(|(replica, c)| ReplicaPolicyStatus {
                name: (*replica).to_owned(),
                generation: c.and_then(|c| c.generation),
                error: c
                    .filter(|c| c.observed == generation)
                    .and_then(|c| c.error.clone()),
            })
            .collect(),
    }
}

fn condition(
    current: Option<&PolicyStatus>,
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    generation: i64,
    now: Timestamp,
) -> PolicyCondition {
    let since = current
        .into_iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == type_ && c.status == status)
        .map_or(Time(now), |c| c.last_transition_time.clone());
    PolicyCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        observed_generation: Some(generation),
        last_transition_time: since,
    }
}

/// Intents, the rules' actions and their `onUnknown`, comma-separated in
/// the order written (duplicates once), for `kubectl get`.
fn summary(spec: &Map<String, Value>) -> (Option<String>, Option<String>, Option<String>) {
    fn join<'a>(values: impl Iterator<Item = &'a str>) -> Option<String> {
        let mut seen: Vec<&str> = Vec::new();
        for value in values {
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
        (!seen.is_empty()).then(|| seen.join(","))
    }
    let text = |object: &'_ Map<String, Value>, key: &str| -> Option<String> {
        object.get(key).and_then(Value::as_str).map(str::to_owned)
    };
    let intents = spec
        .get("match")
        .and_then(|m| m.get("intents"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    // The inline form is one rule written on the spec itself.
    let rules: Vec<&Map<String, Value>> = match spec.get("rules").and_then(Value::as_array) {
        Some(rules) => rules.iter().filter_map(Value::as_object).collect(),
        None => vec![spec],
    };
    let default = text(spec, "onUnknown").unwrap_or_else(|| "Deny".to_owned());
    let actions: Vec<String> = rules.iter().filter_map(|r| text(r, "action")).collect();
    let on_unknown: Vec<String> = rules
        .iter()
        .map(|r| text(r, "onUnknown").unwrap_or_else(|| default.clone()))
        .collect();
    (
        join(intents),
        join(actions.iter().map(String::as_str)),
        join(on_unknown.iter().map(String::as_str)),
    )
}

#[cfg(test)]
mod tests;
