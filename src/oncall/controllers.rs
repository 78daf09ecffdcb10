//! Whether the controller that owns a finalizer looks alive, from evidence
//! only: a Deployment, StatefulSet, DaemonSet, pod or Lease that belongs to
//! it and runs. Age never enters: an object Terminating for a week behind a
//! running controller is a slow or failing controller, not a dead one.
//!
//! Built-in finalizers name their owner (kube-controller-manager's
//! controllers, CSI sidecars); for the rest, the finalizer's domain
//! (`acme.example/cleanup` → `acme`, `example`) is matched as whole words
//! against workload names, namespaces, app labels, images and Lease names
//! and holders (controller-runtime's leader Leases are named after it).

use serde::Serialize;

use super::evidence::{Candidate, Evidence, kinds};
use crate::facts::finalizers::owner_of;
use crate::intent::actors::KUBE_CONTROLLER_MANAGER;

/// Domain labels too generic to identify a controller.
const GENERIC: &[&str] = &[
    "com",
    "io",
    "org",
    "net",
    "dev",
    "sh",
    "co",
    "cloud",
    "app",
    "apps",
    "www",
    "k8s",
    "x-k8s",
    "kubernetes",
    "finalizer",
    "finalizers",
    "csi",
];

/// The kinds whose absence leaves "no controller found" unproven.
const SEARCHED: [(&str, &str); 5] = [
    (kinds::DEPLOYMENT, "Deployment"),
    (kinds::STATEFUL_SET, "StatefulSet"),
    (kinds::DAEMON_SET, "DaemonSet"),
    (kinds::POD, "Pod"),
    (kinds::LEASE, "Lease"),
];

/// What the evidence says about one finalizer's controller.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "verdict")]
pub enum Liveness {
    /// Something that belongs to it runs: not dead, at most slow.
    Alive { running: Vec<Candidate> },
    /// It is installed but nothing of it runs.
    Down { stopped: Vec<Candidate> },
    /// Nothing belongs to it: it looks uninstalled.
    Gone { checked: String },
    /// The data needed was not read.
    CannotTell { why: String },
}

/// The owner of a finalizer and the evidence about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerCheck {
    pub finalizer: String,
    /// e.g. `kube-controller-manager (pvc-protection-controller)`, or
    /// `a controller matching "acme"`.
    pub owner: String,
    #[serde(flatten)]
    pub liveness: Liveness,
}

/// Check the controller of `finalizer` against `evidence`.
pub fn check(finalizer: &str, evidence: &Evidence) -> ControllerCheck {
    let known = owner_of(finalizer);
    if let Some(owner) = known.filter(|o| o.users.contains(&KUBE_CONTROLLER_MANAGER)) {
        return ControllerCheck {
            finalizer: finalizer.to_owned(),
            owner: format!("kube-controller-manager ({})", owner.controller),
            liveness: controller_manager(evidence),
        };
    }
    // Deployment-defined owners (CSI sidecars) are found by their driver
    // name, which the finalizer spells with dashes for dots.
    let tokens = match known {
        Some(_) => tokens(
            &finalizer
                .rsplit_once('/')
                .map_or(finalizer, |(_, d)| d)
                .replace('-', "."),
        ),
        None => tokens(
            finalizer
                .split_once('/')
                .map_or(finalizer, |(domain, _)| domain),
        ),
    };
    let owner = match known {
        Some(owner) => format!("{} matching {}", owner.controller, quoted(&tokens)),
        None => format!("a controller matching {}", quoted(&tokens)),
    };
    ControllerCheck {
        finalizer: finalizer.to_owned(),
        owner,
        liveness: search(&tokens, evidence),
    }
}

/// Whether any finalizer is owned by kube-controller-manager.
pub fn kube_controller_manager(evidence: &Evidence) -> ControllerCheck {
    ControllerCheck {
        finalizer: String::new(),
        owner: "kube-controller-manager".into(),
        liveness: controller_manager(evidence),
    }
}

/// kube-controller-manager's leader Lease, renewed every few seconds.
fn controller_manager(evidence: &Evidence) -> Liveness {
    if !evidence.has(kinds::LEASE) {
        return Liveness::CannotTell {
            why: evidence.missing(kinds::LEASE),
        };
    }
    let lease = (evidence.candidates.iter()).find(|c| {
        c.kind == "Lease" && c.namespace == "kube-system" && c.name == "kube-controller-manager"
    });
    match lease {
        Some(lease) if lease.alive => Liveness::Alive { running: vec![lease.clone()] },
        Some(lease) => Liveness::Down { stopped: vec![lease.clone()] },
        None => Liveness::CannotTell {
            why: "there is no Lease kube-system/kube-controller-manager (a managed control plane may hide it)".into(),
        },
    }
}

fn search(tokens: &[String], evidence: &Evidence) -> Liveness {
    if tokens.is_empty() {
        return Liveness::CannotTell {
            why: "the finalizer's name says nothing about its controller".into(),
        };
    }
    let matches: Vec<&Candidate> = (evidence.candidates.iter())
        .filter(|c| tokens.iter().any(|t| has_word(&c.haystack, t)))
        .collect();
    let running: Vec<Candidate> = matches
        .iter()
        .filter(|c| c.alive)
        .map(|c| (*c).clone())
        .collect();
    if !running.is_empty() {
        return Liveness::Alive { running };
    }
    let missing: Vec<&str> = (SEARCHED.iter())
        .filter(|(kind, _)| !evidence.has(kind))
        .map(|(kind, _)| *kind)
        .collect();
    if !missing.is_empty() {
        let why = missing
            .iter()
            .map(|k| evidence.missing(k))
            .collect::<Vec<_>>()
            .join("; ");
        return Liveness::CannotTell { why };
    }
    if !matches.is_empty() {
        return Liveness::Down {
            stopped: matches.into_iter().cloned().collect(),
        };
    }
    let counted: Vec<String> = (SEARCHED.iter())
        .map(|(_, kind)| {
            let n = evidence
                .candidates
                .iter()
                .filter(|c| c.kind == *kind)
                .count();
            format!("{n} {kind}{}", if n == 1 { "" } else { "s" })
        })
        .collect();
    Liveness::Gone {
        checked: format!(
            "no Deployment, StatefulSet, DaemonSet, pod or Lease matches {} (checked {})",
            quoted(tokens),
            counted.join(", ")
        ),
    }
}

/// The distinctive labels of a domain or driver name: `acme.example` →
/// `acme`, `example`; `cert-manager.io` → `cert-manager`.
pub fn tokens(words: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    for label in words.to_lowercase().split(['.', '/']) {
        if label.len() >= 3 && !GENERIC.contains(&label) && !tokens.iter().any(|t| t == label) {
            tokens.push(label.to_owned());
        }
    }
    tokens
}

/// `word` occurs in `haystack` with no letter or digit on either side.
fn has_word(haystack: &str, word: &str) -> bool {
    let bytes = haystack.as_bytes();
    haystack.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).and_then(|i| bytes.get(i));
        let after = bytes.get(at + word.len());
        !before.is_some_and(u8::is_ascii_alphanumeric)
            && !after.is_some_and(u8::is_ascii_alphanumeric)
    })
}

fn quoted(tokens: &[String]) -> String {
    let quoted: Vec<String> = tokens.iter().map(|t| format!("\"{t}\"")).collect();
    quoted.join(" or ")
}

#[cfg(test)]
mod tests;
