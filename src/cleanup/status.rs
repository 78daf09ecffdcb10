//! The verifier's pure half: next status, requeue interval, event text.
//!
//! Kept apart from the I/O so phase transitions, condition bookkeeping and
//! backoff are unit-tested without an API server.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::crd::{ChecklistItem, ForceDeletionStatus, ItemState, Phase, RecordCondition};

pub const CONDITION_CLEAN: &str = "Clean";
pub const CONDITION_DEADLINE: &str = "DeadlineExceeded";

/// The status after one evaluation. Conditions keep their transition time
/// while their status does not change, so an unchanged result compares equal
/// (see [`changed`]) and causes no write.
pub fn next(
    current: &ForceDeletionStatus,
    phase: Phase,
    checklist: Vec<ChecklistItem>,
    past_deadline: bool,
    now: Timestamp,
) -> ForceDeletionStatus {
    let open: Vec<&str> = checklist
        .iter()
        .filter(|i| matches!(i.state, ItemState::Pending | ItemState::Failed))
        .map(|i| i.name.as_str())
        .collect();
    let failed = checklist.iter().any(|i| i.state == ItemState::Failed);
    let clean = if phase == Phase::Clean {
        condition(
            current,
            CONDITION_CLEAN,
            true,
            "Verified",
            "every check the API can show passed".into(),
            now,
        )
    } else {
        let reason = if failed {
            "CheckFailed"
        } else {
            "ChecksPending"
        };
        condition(
            current,
            CONDITION_CLEAN,
            false,
            reason,
            format!("open: {}", open.join(", ")),
            now,
        )
    };
    let late = past_deadline && phase != Phase::Clean;
    let deadline = if late {
        condition(
            current,
            CONDITION_DEADLINE,
            true,
            "NotCleanInTime",
            "not clean before the deadline".into(),
            now,
        )
    } else {
        condition(
            current,
            CONDITION_DEADLINE,
            false,
            "WithinDeadline",
            String::new(),
            now,
        )
    };
    ForceDeletionStatus {
        phase,
        conditions: vec![clean, deadline],
        checklist,
        last_checked: Some(Time(now)),
    }
}

fn condition(
    current: &ForceDeletionStatus,
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    now: Timestamp,
) -> RecordCondition {
    let status = if status { "True" } else { "False" }.to_string();
    let since = current
        .conditions
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or(Time(now));
    RecordCondition {
        type_: type_.to_string(),
        status,
        reason: reason.to_string(),
        message,
        last_transition_time: since,
    }
}

/// Whether `next` differs from `current` in anything but the check time.
pub fn changed(current: &ForceDeletionStatus, next: &ForceDeletionStatus) -> bool {
    current.phase != next.phase
        || current.checklist != next.checklist
        || current.conditions != next.conditions
}

/// When to look again: often while young, less as the record ages, never
/// past the deadline (so NeedsAttention turns on time); Clean is final.
pub fn requeue_after(
    phase: Phase,
    age: Duration,
    deadline: Duration,
    min: Duration,
    max: Duration,
) -> Option<Duration> {
    match phase {
        Phase::Clean => None,
        Phase::NeedsAttention => Some(max),
        Phase::Pending | Phase::Verifying => {
            let interval = (age / 8).clamp(min, max.max(min));
            let until_deadline = deadline.saturating_sub(age);
            Some(if until_deadline.is_zero() {
                interval
            } else {
                interval.min(until_deadline.max(Duration::from_secs(1)))
            })
        }
    }
}

/// Exponential backoff after API errors: min·2ⁿ, capped at max.
pub fn error_backoff(failures: u32, min: Duration, max: Duration) -> Duration {
    let factor = 2u32.saturating_pow(failures.min(16));
    min.saturating_mul(factor).min(max)
}

/// Event note (≤ 1 KiB, the Events API limit) naming the open items.
pub fn event_note(phase: Phase, checklist: &[ChecklistItem]) -> String {
    let manual = checklist
        .iter()
        .filter(|i| i.state == ItemState::Manual)
        .count();
    let open: Vec<String> = checklist
        .iter()
        .filter(|i| matches!(i.state, ItemState::Pending | ItemState::Failed))
        .map(|i| format!("{} ({}): {}", i.name, state_name(i.state), i.message))
        .collect();
    let mut note = match phase {
        Phase::Clean => format!(
            "every check the API can show passed; {manual} node-side step(s) listed for the operator"
        ),
        _ if open.is_empty() => format!("{} checks", checklist.len()),
        _ => open.join("; "),
    };
    truncate(&mut note, 1024);
    note
}

fn state_name(state: ItemState) -> &'static str {
    match state {
        ItemState::Ok => "ok",
        ItemState::Pending => "pending",
        ItemState::Failed => "failed",
        ItemState::Manual => "manual",
    }
}

fn truncate(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
}

#[cfg(test)]
mod tests;
