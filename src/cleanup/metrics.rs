//! Cleanup metrics: records written, verification phases, the verifier's lease.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::crd::Phase;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhaseLabels {
    pub phase: &'static str,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Backend {
    Kube,
    Journal,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Kube => "kube",
            Backend::Journal => "journal",
        }
    }
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum RecordResult {
    /// A new record was written.
    Created,
    /// The record already existed (a repeated admission call or a retry).
    Existing,
    Error,
}

impl RecordResult {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordResult::Created => "created",
            RecordResult::Existing => "existing",
            RecordResult::Error => "error",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RecordLabels {
    pub backend: &'static str,
    pub result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BackendLabels {
    pub backend: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReconcileLabels {
    pub result: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Handles are cheap clones sharing the same series.
#[derive(Clone, Debug)]
pub struct CleanupMetrics {
    forcedeletions: Family<PhaseLabels, Gauge>,
    oldest: Family<PhaseLabels, Gauge>,
    records: Family<RecordLabels, Counter>,
    record_duration: HistogramFamily<BackendLabels>,
    reconciles: Family<ReconcileLabels, Counter>,
    leader: Gauge,
}

impl Default for CleanupMetrics {
    fn default() -> Self {
        Self {
            forcedeletions: Family::default(),
            oldest: Family::default(),
            records: Family::default(),
            record_duration: Family::new_with_constructor(record_duration_histogram),
            reconciles: Family::default(),
            leader: Gauge::default(),
        }
    }
}

fn record_duration_histogram() -> Histogram {
    // 0.5 ms (page-cache append) .. ~8 s (a slow API server at the budget).
    Histogram::new(exponential_buckets(0.0005, 2.0, 15))
}

impl CleanupMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "forcegate_forcedeletions",
            "ForceDeletion records by verification phase (reported by the verifier leader)",
            metrics.forcedeletions.clone(),
        );
        registry.register(
            "forcegate_forcedeletions_oldest_created_timestamp_seconds",
            "Creation time of the oldest ForceDeletion record in each phase that has one (verifier leader)",
            metrics.oldest.clone(),
        );
        registry.register(
            "forcegate_cleanup_records",
            "Cleanup records requested at admission, by backend and result",
            metrics.records.clone(),
        );
        registry.register(
            "forcegate_cleanup_record_duration_seconds",
            "Time to create-or-get one cleanup record",
            metrics.record_duration.clone(),
        );
        registry.register(
            "forcegate_cleanup_reconciles",
            "Verifier reconciliations of ForceDeletion records, by result",
            metrics.reconciles.clone(),
        );
        registry.register(
            "forcegate_cleanup_verifier_leader",
            "1 while this replica holds the verifier lease",
            metrics.leader.clone(),
        );
        metrics
    }

    pub fn observe_record(&self, backend: Backend, result: RecordResult, seconds: f64) {
        let backend = backend.as_str();
        self.records
            .get_or_create(&RecordLabels {
                backend,
                result: result.as_str(),
            })
            .inc();
        self.record_duration
            .get_or_create(&BackendLabels { backend })
            .observe(seconds);
    }

    /// Replace the per-phase counts (every phase is always present).
    pub fn set_phases(&self, counts: &[(Phase, i64)]) {
        for phase in Phase::ALL {
            let count = counts
                .iter()
                .filter(|(p, _)| *p == phase)
                .map(|(_, c)| *c)
                .sum();
            self.forcedeletions
                .get_or_create(&PhaseLabels {
                    phase: phase.as_str(),
                })
                .set(count);
        }
    }

    /// The oldest record's creation time (Unix seconds) per phase; a phase
    /// without records has no series, so an age alert on it cannot fire.
    pub fn set_oldest(&self, oldest: &[(Phase, i64)]) {
        for phase in Phase::ALL {
            let labels = PhaseLabels {
                phase: phase.as_str(),
            };
            match oldest.iter().find(|(p, _)| *p == phase) {
                Some((_, created)) => {
                    self.oldest.get_or_create(&labels).set(*created);
                }
                None => {
                    self.oldest.remove(&labels);
                }
            }
        }
    }

    /// A replica that loses the lease stops reporting phases: the new leader does.
    pub fn clear_phases(&self) {
        self.forcedeletions.clear();
        self.oldest.clear();
    }

    pub fn reconciled(&self, result: &'static str) {
        self.reconciles
            .get_or_create(&ReconcileLabels { result })
            .inc();
    }

    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }
}

#[cfg(test)]
mod tests;
