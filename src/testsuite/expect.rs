//! Expectations against what the engine answered.

use super::Observed;
use super::model::Expect;

/// Compare expectations with what was observed; one line per mismatch.
pub fn check(expect: &Expect, observed: &Observed) -> Vec<String> {
    let mut failures = Vec::new();
    let mut compare = |what: &str, want: Option<bool>, got: bool| {
        if let Some(want) = want
            && want != got
        {
            failures.push(format!("expected {what}: {want}, got {got}"));
        }
    };
    compare("allowed", expect.allowed, observed.allowed);
    compare("recorded", expect.recorded, observed.recorded);
    compare("breakGlass", expect.break_glass, observed.break_glass);
    if let Some(intent) = &expect.intent
        && *intent != observed.intent
    {
        failures.push(format!("expected intent {intent}, got {}", observed.intent));
    }
    if let Some(want) = &expect.denying_policies {
        let mut want = want.clone();
        want.sort();
        want.dedup();
        if want != observed.denying_policies {
            failures.push(format!(
                "expected denying policies [{}], got [{}]",
                want.join(", "),
                observed.denying_policies.join(", ")
            ));
        }
    }
    if let Some(texts) = &expect.message_contains {
        for text in texts.items() {
            if !observed.message.contains(text) {
                failures.push(format!(
                    "message does not contain {text:?}; message: {:?}",
                    observed.message
                ));
            }
        }
    }
    if let Some(texts) = &expect.warnings_contain {
        for text in texts.items() {
            if !observed.warnings.iter().any(|w| w.contains(text)) {
                failures.push(format!(
                    "no warning contains {text:?}; warnings: {:?}",
                    observed.warnings
                ));
            }
        }
    }
    if expect.no_warnings == Some(true) && !observed.warnings.is_empty() {
        failures.push(format!("expected no warnings, got {:?}", observed.warnings));
    }
    failures
}
