//! The server's own metrics, and the registry everything else registers into.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

use crate::intent::IntentKind;

/// Content type of the OpenMetrics text exposition.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Admission latency buckets: decisions are sub-millisecond unless a
/// cleanup record is written, which is bounded by the record timeout.
const DURATION_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    endpoint: &'static str,
    intent: &'static str,
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// The endpoints whose series exist from the start.
const ENDPOINTS: [&str; 2] = ["validate", "mutate"];

/// Request metrics of the admission endpoints. Every (endpoint, intent,
/// decision) and endpoint series is created at registration, so each is
/// exported from zero.
#[derive(Clone)]
pub struct Metrics {
    requests: Family<DecisionLabels, Counter>,
    duration: Family<EndpointLabels, Histogram>,
    bad_requests: Family<ReasonLabels, Counter>,
    errors: Family<ReasonLabels, Counter>,
    in_flight: Gauge,
    pub tls: TlsMetrics,
}

/// Serving-certificate metrics, updated by the reloader.
#[derive(Clone, Default)]
pub struct TlsMetrics {
    expiry: Gauge<i64>,
    reloads: Family<ResultLabels, Counter>,
    handshake_failures: Family<ReasonLabels, Counter>,
}

impl Metrics {
    /// Register the server's metrics (and build info) into `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let requests: Family<DecisionLabels, Counter> = Family::default();
        let duration: Family<EndpointLabels, Histogram> =
            Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS));
        for endpoint in ENDPOINTS {
            for intent in IntentKind::NAMES {
                for decision in ["allowed", "denied"] {
                    requests.get_or_create_owned(&DecisionLabels {
                        endpoint,
                        intent,
                        decision,
                    });
                }
            }
            duration.get_or_create_owned(&EndpointLabels { endpoint });
        }
        let metrics = Self {
            requests,
            duration,
            bad_requests: Family::default(),
            errors: Family::default(),
            in_flight: Gauge::default(),
            tls: TlsMetrics::default(),
        };
        // From zero, as the request series: `increase()` sees the first error.
        for reason in ["timeout", "internal"] {
            let _ = metrics.errors.get_or_create(&ReasonLabels { reason });
        }
        registry.register(
            "forcegate_build",
            "Build information",
            Info::new(vec![
                ("version", env!("CARGO_PKG_VERSION")),
                ("name", env!("CARGO_PKG_NAME")),
            ]),
        );
        registry.register(
            "forcegate_admission_requests",
            "Admission reviews answered, by endpoint, intent and decision",
            metrics.requests.clone(),
        );
        registry.register_with_unit(
            "forcegate_admission_request_duration",
            "Time from request start to response, by endpoint",
            Unit::Seconds,
            metrics.duration.clone(),
        );
        registry.register(
            "forcegate_bad_requests",
            "Requests rejected before a decision (4xx), by reason",
            metrics.bad_requests.clone(),
        );
        registry.register(
            "forcegate_admission_errors",
            "Admission requests that failed on our side (timeout, internal), by reason",
            metrics.errors.clone(),
        );
        registry.register(
            "forcegate_admission_requests_in_flight",
            "Admission requests being processed",
            metrics.in_flight.clone(),
        );
        registry.register(
            "forcegate_tls_certificate_expiry_timestamp_seconds",
            "notAfter of the serving certificate, as a Unix timestamp",
            metrics.tls.expiry.clone(),
        );
        registry.register(
            "forcegate_tls_reloads",
            "Serving certificate reload attempts, by result",
            metrics.tls.reloads.clone(),
        );
        registry.register(
            "forcegate_tls_handshake_failures",
            "TLS handshakes that failed or timed out, by reason",
            metrics.tls.handshake_failures.clone(),
        );
        metrics
    }

    pub fn decided(&self, endpoint: &'static str, intent: &'static str, allowed: bool) {
        let decision = if allowed { "allowed" } else { "denied" };
        self.requests
            .get_or_create(&DecisionLabels {
                endpoint,
                intent,
                decision,
            })
            .inc();
    }

    pub fn observe_duration(&self, endpoint: &'static str, seconds: f64) {
        self.duration
            .get_or_create(&EndpointLabels { endpoint })
            .observe(seconds);
    }

    pub fn bad_request(&self, reason: &'static str) {
        self.bad_requests
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    pub fn error(&self, reason: &'static str) {
        self.errors.get_or_create(&ReasonLabels { reason }).inc();
    }

    /// Counts the request as in flight until the guard drops. The guard
    /// borrows the gauge: a clone would add two reference-count updates, on
    /// a cache line both workers share, to every request.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }

    /// Requests currently being processed.
    pub fn in_flight_now(&self) -> i64 {
        self.in_flight.get()
    }
}

/// Decrements the in-flight gauge on drop (also on cancellation).
pub struct InFlight<'a>(&'a Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl TlsMetrics {
    pub fn loaded(&self, not_after: i64) {
        self.expiry.set(not_after);
    }

    pub fn reload(&self, ok: bool) {
        let result = if ok { "success" } else { "error" };
        self.reloads.get_or_create(&ResultLabels { result }).inc();
    }

    pub fn handshake_failed(&self, reason: &'static str) {
        self.handshake_failures
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }
}

/// Render the registry as OpenMetrics text.
pub fn render(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry)?;
    Ok(out)
}

/// Shared, read-only registry for the `/metrics` handlers.
pub type SharedRegistry = Arc<Registry>;

#[cfg(test)]
mod tests;
