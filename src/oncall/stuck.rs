//! `stuck`: every object Terminating for longer than a threshold, and why,
//! from [`Evidence`]. Pure: the same evidence gives the same report.
//!
//! Each object gets findings (what the evidence shows) and advice at one of
//! three levels: wait (something is making progress), act (a safe next step,
//! with commands), or a human (what to check, and why nothing is safe to do
//! blindly). Nothing here is ever called dead for its age alone.

use std::time::Duration;

use serde::Serialize;

use super::controllers::{self, ControllerCheck, Liveness};
use super::evidence::{Candidate, Evidence, Terminating};
use super::inventory::{Gap, group_of};

mod namespaces;
mod pods;

/// How urgently a human must act. Ordered: the worst advice decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Level {
    /// Progress is being made; give it time.
    Wait,
    /// A safe next step exists.
    Act,
    /// Nothing is safe to do blindly: a human checks first.
    Human,
}

/// One thing the evidence shows about an object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Stable identifier for scripts, e.g. `node-unreachable`, `controller-gone`.
    pub code: &'static str,
    pub text: String,
}

/// What to do about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Advice {
    pub level: Level,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
}

/// One stuck object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stuck {
    #[serde(flatten)]
    pub object: Terminating,
    /// Seconds since its deletionTimestamp (for pods: since the end of
    /// their grace period).
    pub age_seconds: i64,
    pub findings: Vec<Finding>,
    pub advice: Vec<Advice>,
    /// The most urgent advice's level.
    pub level: Level,
    /// The finalizers' controllers and what the evidence says of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<ControllerCheck>,
}

/// Everything stuck: cluster-scoped objects first, then by namespace, kind
/// and name (the order of the evidence), so that runs compare line by line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub older_than_seconds: u64,
    pub stuck: Vec<Stuck>,
    /// What could not be read: diagnoses that needed it say "cannot tell".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<Gap>,
}

impl Report {
    /// Something needs attention: exit code 1.
    pub fn needs_attention(&self) -> bool {
        !self.stuck.is_empty()
    }
}

/// Which objects to report: one namespace's (and the namespace itself), or all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    Namespace(&'a str),
    All,
}

impl Scope<'_> {
    fn covers(&self, object: &Terminating) -> bool {
        match self {
            Scope::All => true,
            Scope::Namespace(ns) => {
                object.namespace.as_deref() == Some(ns)
                    || (object.group_kind == "Namespace" && object.name == *ns)
            }
        }
    }
}

/// Diagnose every object in `scope` Terminating for at least `older_than`.
pub fn diagnose(evidence: &Evidence, scope: Scope<'_>, older_than: Duration) -> Report {
    let threshold = i64::try_from(older_than.as_secs()).unwrap_or(i64::MAX);
    let stuck: Vec<Stuck> = (evidence.terminating.iter())
        .filter(|t| scope.covers(t))
        .map(|t| {
            (
                t,
                super::seconds_between(t.deletion_timestamp, evidence.now),
            )
        })
        .filter(|(_, age)| *age >= threshold)
        .map(|(t, age)| one(evidence, t, age))
        .collect();
    Report {
        older_than_seconds: older_than.as_secs(),
        stuck,
        gaps: evidence.gaps.clone(),
    }
}

/// Findings and advice as they are collected for one object.
#[derive(Default)]
struct Diagnosis {
    findings: Vec<Finding>,
    advice: Vec<Advice>,
    controllers: Vec<ControllerCheck>,
}

impl Diagnosis {
    fn finding(&mut self, code: &'static str, text: impl Into<String>) {
        self.findings.push(Finding {
            code,
            text: text.into(),
        });
    }

    fn advise(&mut self, level: Level, text: impl Into<String>, commands: Vec<String>) {
        self.advice.push(Advice {
            level,
            text: text.into(),
            commands,
        });
    }

    /// A kind the diagnosis needed was not read.
    fn cannot_tell(&mut self, what: String) {
        self.finding("cannot-tell", format!("cannot tell: {what}"));
        self.advise(Level::Human, format!("check by hand: {what}"), Vec::new());
    }
}

fn one(evidence: &Evidence, object: &Terminating, age_seconds: i64) -> Stuck {
    let mut d = Diagnosis::default();
    // Finalizers a kind-specific diagnosis explains itself.
    let handled: &[&str] = match (group_of(&object.api_version), object.kind.as_str()) {
        ("", "Pod") => {
            pods::pod(evidence, object, &mut d);
            &[]
        }
        ("", "PersistentVolumeClaim") => pods::claim(evidence, object, &mut d),
        ("", "PersistentVolume") => pods::volume(evidence, object, &mut d),
        ("", "Namespace") => {
            namespaces::namespace(evidence, object, &mut d);
            &[]
        }
        _ => &[],
    };
    for finalizer in object
        .finalizers
        .iter()
        .filter(|f| !handled.contains(&f.as_str()))
    {
        finalizer_controller(evidence, object, finalizer, &mut d);
    }
    if object.finalizers.is_empty() && object.spec_finalizers.is_empty() && d.advice.is_empty() {
        d.finding(
            "no-finalizers",
            "no finalizers left: the API server removes it on its next update",
        );
        d.advise(
            Level::Wait,
            "it should disappear; if it does not, look for a failing admission webhook on its kind",
            Vec::new(),
        );
    }
    let level = d
        .advice
        .iter()
        .map(|a| a.level)
        .max()
        .unwrap_or(Level::Wait);
    Stuck {
        object: object.clone(),
        age_seconds,
        findings: d.findings,
        advice: d.advice,
        level,
        controllers: d.controllers,
    }
}

/// `kind.group` as kubectl accepts it (`widget.acme.example`, `pod`).
fn resource_arg(object: &Terminating) -> String {
    let group = group_of(&object.api_version);
    let kind = object.kind.to_lowercase();
    if group.is_empty() {
        kind
    } else {
        format!("{kind}.{group}")
    }
}

/// `-n <ns> ` for namespaced objects.
fn namespace_flag(object: &Terminating) -> String {
    object
        .namespace
        .as_deref()
        .map(|ns| format!("-n {ns} "))
        .unwrap_or_default()
}

/// Whether `finalizer`'s controller runs, and what that means for `object`.
fn finalizer_controller(
    evidence: &Evidence,
    object: &Terminating,
    finalizer: &str,
    d: &mut Diagnosis,
) {
    let check = controllers::check(finalizer, evidence);
    controller_advice(object, &check, d);
    d.controllers.push(check);
}

fn controller_advice(object: &Terminating, check: &ControllerCheck, d: &mut Diagnosis) {
    let (finalizer, owner) = (check.finalizer.as_str(), check.owner.as_str());
    let subject = if finalizer.is_empty() {
        owner.to_owned()
    } else {
        format!("{finalizer}: {owner}")
    };
    match &check.liveness {
        Liveness::Alive { running } => {
            d.finding(
                "controller-alive",
                format!("{subject} is running: {}", listed(running)),
            );
            let logs = (running.iter())
                .filter(|c| matches!(c.kind.as_str(), "Deployment" | "StatefulSet" | "DaemonSet"))
                .map(|c| {
                    format!(
                        "kubectl -n {} logs {}/{} --tail=100",
                        c.namespace,
                        c.kind.to_lowercase(),
                        c.name
                    )
                })
                .collect();
            d.advise(Level::Wait, format!("{owner} is alive, so it is slow or failing on this object, not gone: wait, and if nothing moves look for errors about it in its logs"), logs);
        }
        Liveness::Down { stopped } => {
            d.finding(
                "controller-down",
                format!(
                    "{subject} is installed but not running: {}",
                    listed(stopped)
                ),
            );
            d.advise(Level::Human, format!("bring {owner} back so it can finish its cleanup; removing {} would skip that cleanup", if finalizer.is_empty() { "finalizers" } else { finalizer }), Vec::new());
        }
        Liveness::Gone { checked } => {
            d.finding(
                "controller-gone",
                format!("{subject} looks gone: {checked}"),
            );
            let resource = resource_arg(object);
            let ns = namespace_flag(object);
            d.advise(
                Level::Human,
                format!("confirm {owner} was uninstalled on purpose and clean up by hand what it managed for {} (its cleanup will never run); only then remove {finalizer}, which forcegate gates and records", object.name),
                vec![
                    format!("kubectl forcegate explain {resource} {} {ns}", object.name).trim_end().to_owned(),
                    format!("kubectl {ns}patch {resource} {} --type=json -p '[{{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}}]'", object.name),
                ],
            );
        }
        Liveness::CannotTell { why } => {
            d.finding(
                "controller-unknown",
                format!("cannot tell whether {subject} runs: {why}"),
            );
            d.advise(
                Level::Human,
                format!(
                    "check by hand that {owner} runs before touching {}",
                    if finalizer.is_empty() {
                        "the object"
                    } else {
                        finalizer
                    }
                ),
                Vec::new(),
            );
        }
    }
}

/// `Deployment ns/name (1/1 ready); Lease ...`
fn listed(candidates: &[Candidate]) -> String {
    let shown: Vec<String> = (candidates.iter())
        .map(|c| format!("{} {}/{} ({})", c.kind, c.namespace, c.name, c.state))
        .collect();
    shown.join("; ")
}

/// "1 Widget.acme.example, 2 ConfigMap"-style text for a namespace's contents.
fn describe_counts<'a>(counts: impl Iterator<Item = (&'a String, &'a u64)>) -> String {
    counts
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
