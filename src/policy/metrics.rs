//! Policy metrics: reloads by result, the size of the set in force, and
//! which policies fire with which action.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::decision::Decision;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadLabels {
    /// `success` or `failure`.
    pub result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub policy: String,
    /// `Deny`, `Warn` or `Record`.
    pub action: &'static str,
    /// `true` when the policy fired through `onUnknown`.
    pub unknown: &'static str,
}

/// Handles are cheap clones sharing the same series.
#[derive(Clone, Debug, Default)]
pub struct PolicyMetrics {
    reloads: Family<ReloadLabels, Counter>,
    loaded: Gauge,
    last_success: Gauge,
    /// Only series that fired are exported: policy names come and go with
    /// reloads.
    outcomes: Family<OutcomeLabels, Counter>,
    break_glass: Counter,
}

impl PolicyMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "forcegate_policy_reloads",
            "Policy directory reloads by result (a failure keeps the previous set in force)",
            metrics.reloads.clone(),
        );
        registry.register(
            "forcegate_policies_loaded",
            "Policies in the set currently in force",
            metrics.loaded.clone(),
        );
        registry.register(
            "forcegate_policy_last_reload_success_timestamp_seconds",
            "Unix time of the last successful policy load",
            metrics.last_success.clone(),
        );
        registry.register(
            "forcegate_policy_outcomes",
            "Policies that fired, by action and whether a fact was unknown",
            metrics.outcomes.clone(),
        );
        registry.register(
            "forcegate_break_glass",
            "Requests allowed by break-glass at the validating endpoint (dry runs included)",
            metrics.break_glass.clone(),
        );
        metrics
    }

    /// A set of `count` policies is now in force.
    pub fn loaded(&self, count: usize) {
        self.reloads
            .get_or_create(&ReloadLabels { result: "success" })
            .inc();
        self.loaded.set(i64::try_from(count).unwrap_or(i64::MAX));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.last_success
            .set(i64::try_from(now).unwrap_or(i64::MAX));
    }

    /// A reload failed; the previous set stays in force.
    pub fn reload_failed(&self) {
        self.reloads
            .get_or_create(&ReloadLabels { result: "failure" })
            .inc();
    }

    /// Count the policies that fired for one decision.
    pub fn observe(&self, decision: &Decision) {
        if decision.break_glass.is_some() {
            self.break_glass.inc();
        }
        for outcome in &decision.outcomes {
            let labels = OutcomeLabels {
                policy: outcome.policy.to_string(),
                action: outcome.action.as_str(),
                unknown: if outcome.unknown { "true" } else { "false" },
            };
            self.outcomes.get_or_create(&labels).inc();
        }
    }

    /// Reload counts so far, for tests: (success, failure).
    pub fn reload_counts(&self) -> (u64, u64) {
        let get = |result| self.reloads.get_or_create(&ReloadLabels { result }).get();
        (get("success"), get("failure"))
    }
}

#[cfg(test)]
mod tests;
