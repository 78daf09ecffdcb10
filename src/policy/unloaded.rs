//! The decision before any policy set is in force (the policy objects have
//! not synced yet): a candidate is undecidable, and forcegate does not
//! guess. `/readyz` says not ready meanwhile, so the Service sends the API
//! server elsewhere; this answers whoever calls anyway.

use super::EvalInput;
use super::eval::describe_request;
use super::message::audit;
use crate::decision::Decision;

/// Deny `input`'s request because the policies are not loaded (`reason`).
pub(crate) fn decision(input: &EvalInput<'_>, reason: &str) -> Decision {
    let mut decision = Decision {
        allowed: false,
        message: format!(
            "forcegate denied {}: could not decide: its policies are not loaded yet ({reason}); \
             forcegate does not guess\n  Instead: retry in a few seconds; if this persists, check \
             forcegate's /readyz and `kubectl get forcedeletionpolicies`",
            describe_request(input.intent)
        ),
        ..Decision::default()
    };
    let notes = &mut decision.audit_annotations;
    notes.insert(audit::INTENT.into(), input.intent.kind.name().into());
    notes.insert(audit::UNKNOWN_FACTS.into(), "policies: not loaded".into());
    notes.insert(audit::DECISION.into(), "denied".into());
    decision
}
