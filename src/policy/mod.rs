//! ForceDeletionPolicy: the YAML policy language, its loader and evaluator.

use k8s_openapi::jiff::Timestamp;

use crate::admission::Request;
use crate::decision::Decision;
use crate::engine::Settings;
use crate::facts::Facts;
use crate::intent::Intent;

/// Everything one evaluation reads.
pub struct EvalInput<'a> {
    pub intent: &'a Intent,
    pub facts: &'a Facts,
    pub request: &'a Request,
    pub settings: &'a Settings,
    pub now: Timestamp,
}

/// A loaded, validated set of policies (all-or-nothing).
#[derive(Debug, Default)]
pub struct PolicySet {}

impl PolicySet {
    /// Run every matching policy; the most severe action wins.
    pub fn evaluate(&self, _input: &EvalInput<'_>) -> Decision {
        todo!("issue 4")
    }
}
