//! Per-kind cache metrics, read from [`ClusterView::status`] at scrape time
//! so they can never disagree with what `/readyz` and the facts see.
//!
//! - `forcegate_cluster_objects{kind}`: objects cached.
//! - `forcegate_cluster_synced{kind}`: 1 once the first list completed.
//! - `forcegate_cluster_stale{kind}`: 1 while facts depending on it are Unknown.
//! - `forcegate_cluster_last_event_age_seconds{kind}`: since the last watch
//!   event, bookmark or list (live source only).
//! - `forcegate_cluster_watch_errors_total{kind}`: failed list/watch calls.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use super::{ClusterView, KindStatus};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

/// The cluster view's metrics; registering it is all the server does.
#[derive(Clone)]
pub struct ClusterMetrics {
    view: Arc<dyn ClusterView>,
}

impl std::fmt::Debug for ClusterMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterMetrics").finish_non_exhaustive()
    }
}

impl ClusterMetrics {
    /// Register collectors for `view` into `registry` (the root registry:
    /// names are already `forcegate_`-prefixed).
    pub fn register(registry: &mut Registry, view: Arc<dyn ClusterView>) -> Self {
        let metrics = Self { view };
        registry.register_collector(Box::new(metrics.clone()));
        metrics
    }
}

type Value = fn(&KindStatus) -> Option<f64>;

const GAUGES: &[(&str, &str, Value)] = &[
    (
        "forcegate_cluster_objects",
        "Objects cached per kind",
        |s| Some(s.objects as f64),
    ),
    (
        "forcegate_cluster_synced",
        "1 once the kind's first list completed (snapshots: the kind is present)",
        |s| Some(if s.synced { 1.0 } else { 0.0 }),
    ),
    (
        "forcegate_cluster_stale",
        "1 while the kind is stale and facts depending on it are Unknown",
        |s| Some(if s.stale { 1.0 } else { 0.0 }),
    ),
    (
        "forcegate_cluster_last_event_age_seconds",
        "Seconds since the last watch event, bookmark or list of the kind",
        |s| s.seconds_since_event,
    ),
];

impl Collector for ClusterMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let statuses = self.view.status();
        for (name, help, value) in GAUGES {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for status in &statuses {
                if let Some(v) = value(status) {
                    let labels = KindLabels {
                        kind: status.kind.clone(),
                    };
                    ConstGauge::new(v).encode(family.encode_family(&labels)?)?;
                }
            }
        }
        let mut family = encoder.encode_descriptor(
            "forcegate_cluster_watch_errors",
            "Failed list and watch calls per kind",
            None,
            MetricType::Counter,
        )?;
        for status in &statuses {
            let labels = KindLabels {
                kind: status.kind.clone(),
            };
            ConstCounter::new(status.watch_errors).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
