//! The outcome of evaluating policies against one classified request.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What a policy does when its conditions hold. Ordered by severity.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Action {
    /// Allow, with a warning shown by kubectl.
    Warn,
    /// Allow, warn, and record a cleanup task (a ForceDeletion) to verify.
    Record,
    /// Deny with code 403 and an explanation.
    Deny,
}

impl Action {
    /// The name policies spell it with (`Deny`), as in audit annotations.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Warn => "Warn",
            Action::Record => "Record",
            Action::Deny => "Deny",
        }
    }
}

/// One policy that fired.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyOutcome {
    /// Shared with the loaded policy: naming it costs no copy.
    pub policy: Arc<str>,
    pub action: Action,
    /// The fact or condition that triggered it, e.g. `facts.node.ready == true`.
    /// Its message and remediation are in the decision's message or
    /// warnings, where the decision shows them.
    pub fact: String,
    /// Fired because a fact it needs was unknown (`onUnknown`).
    pub unknown: bool,
}

/// The merged decision for one request.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub allowed: bool,
    /// For a denial: names each denying policy, its fact and the remedy.
    pub message: String,
    /// Within the API server's limits (256 runes each, 4 KiB total).
    pub warnings: Vec<String>,
    /// Bare keys: the API server prefixes them with the webhook name.
    pub audit_annotations: BTreeMap<String, String>,
    /// Allowed and a cleanup record must be written.
    pub record: bool,
    pub outcomes: Vec<PolicyOutcome>,
    /// Set when break-glass allowed the request.
    pub break_glass: Option<String>,
}

impl Decision {
    /// Allowed, nothing to say (not gated, or no policy fired).
    pub fn allow() -> Self {
        Self {
            allowed: true,
            ..Self::default()
        }
    }

    /// Names of the policies that fired with `action`.
    pub fn policies_with(&self, action: Action) -> Vec<&str> {
        self.outcomes
            .iter()
            .filter(|o| o.action == action)
            .map(|o| &*o.policy)
            .collect()
    }
}
