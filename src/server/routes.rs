//! HTTP routes: admission endpoints, health, readiness, metrics.
//!
//! The admission handler never answers 500 for anything the client sent:
//! content type, size and shape problems are 4xx with a JSON body naming
//! the reason; our own failures (deadline, a bug) are 503/500 so the API
//! server's failurePolicy applies.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::FutureExt;
use prometheus_client::registry::Registry;
use tokio::sync::Semaphore;

use super::Config;
use super::body::{self, BodyBudget, Reserved, TooComplex};
use super::health::Health;
use super::metrics::{self, Metrics};
use crate::admission::BadReview;
use crate::decision::PolicyOutcome;
use crate::engine::{Admitted, Endpoint, Engine};
use crate::intent::ObjectRef;

/// Everything a handler needs; shared behind one `Arc` (axum clones the
/// state for every request: one reference count, not one per field).
pub struct AppState {
    engine: Arc<Engine>,
    metrics: Metrics,
    registry: Arc<Registry>,
    health: Health,
    body_limit: usize,
    /// Bounds the request bodies (and their decoded form) in memory at once.
    body_budget: BodyBudget,
    request_timeout: Duration,
    /// Bounds concurrent admissions.
    permits: Arc<Semaphore>,
}

impl AppState {
    /// The engine behind the admission routes, the limits `config` sets,
    /// `metrics` (registered in `registry`, which `/metrics` serves) and
    /// the readiness switches `/readyz` reports.
    pub fn new(
        engine: Arc<Engine>,
        config: &Config,
        metrics: Metrics,
        registry: Registry,
        health: Health,
    ) -> Self {
        Self {
            engine,
            metrics,
            registry: Arc::new(registry),
            health,
            body_limit: config.body_limit,
            body_budget: BodyBudget::new(config.body_budget),
            request_timeout: config.request_timeout,
            permits: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
        }
    }
}

/// The HTTPS routes: admission (`/validate`, `/mutate`), health, readiness
/// and metrics. Served over TLS by [`Server`](super::Server); a plain
/// `tower::Service`, so tests can call it without a socket.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/validate", post(validate))
        .route("/mutate", post(mutate))
        .route("/validate-policy", post(validate_policy))
        .merge(observability())
        .fallback(not_found)
        .with_state(state)
}

/// The plain-HTTP router: metrics and health only.
pub(crate) fn metrics_only(state: Arc<AppState>) -> Router {
    observability().fallback(not_found).with_state(state)
}

fn observability() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
}

// The whole request rather than a `HeaderMap` extractor, which clones the
// headers.
async fn validate(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    admit(&state, Endpoint::Validate, &parts.headers, body).await
}

async fn mutate(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    admit(&state, Endpoint::Mutate, &parts.headers, body).await
}

/// ForceDeletionPolicy CREATE/UPDATE through the policy loader: no
/// decision, cluster view or record, only the same body checks.
async fn validate_policy(State(state): State<Arc<AppState>>, request: Request) -> Response {
    const LABEL: &str = "validate-policy";
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let reviewed = async {
        let (bytes, _reserved) = read_checked(&state, &parts.headers, body).await?;
        crate::policy::webhook::review(&bytes).map_err(Failure::Bad)
    }
    .await;
    let response = match reviewed {
        Ok(reviewed) => {
            state
                .metrics
                .decided(LABEL, "ForceDeletionPolicy", reviewed.allowed);
            json_response(StatusCode::OK, reviewed.body)
        }
        Err(failure) => failure_response(&state, LABEL, failure),
    };
    state
        .metrics
        .observe_duration(LABEL, started.elapsed().as_secs_f64());
    response
}

/// Why an admission request got no AdmissionReview answer.
enum Failure {
    Bad(BadReview),
    TooComplex(TooComplex),
    Panicked,
}

async fn admit(state: &AppState, endpoint: Endpoint, headers: &HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let label = endpoint_label(endpoint);
    let _in_flight = state.metrics.in_flight();
    let outcome = tokio::time::timeout(
        state.request_timeout,
        handle(state, endpoint, headers, body),
    )
    .await;
    let response = match outcome {
        Ok(Ok(admitted)) => {
            state.metrics.decided(
                label,
                admitted.intent.kind.name(),
                admitted.decision.allowed,
            );
            log_decision(label, &admitted, started.elapsed());
            json_response(StatusCode::OK, admitted.body)
        }
        Ok(Err(failure)) => failure_response(state, label, failure),
        Err(_) => {
            state.metrics.error("timeout");
            tracing::warn!(endpoint = label, timeout = ?state.request_timeout, "admission request deadline exceeded");
            let message = format!("no decision within {:?}", state.request_timeout);
            error_response(StatusCode::SERVICE_UNAVAILABLE, &message, "timeout")
        }
    };
    state
        .metrics
        .observe_duration(label, started.elapsed().as_secs_f64());
    response
}

async fn handle(
    state: &AppState,
    endpoint: Endpoint,
    headers: &HeaderMap,
    body: Body,
) -> Result<Admitted, Failure> {
    let (bytes, _reserved) = read_checked(state, headers, body).await?;
    // Closed only if the semaphore is closed, which we never do.
    let _permit = state.permits.acquire().await.ok();
    // A bug in a policy or fact must cost one request, not the connection.
    AssertUnwindSafe(state.engine.admit(&bytes, endpoint))
        .catch_unwind()
        .await
        .map_err(|_| Failure::Panicked)?
        .map_err(Failure::Bad)
}

/// The body of a JSON request within the body limit, with its share of
/// the body budget (held while the body is decoded).
async fn read_checked<'a>(
    state: &'a AppState,
    headers: &HeaderMap,
    mut body: Body,
) -> Result<(Vec<u8>, Reserved<'a>), Failure> {
    check_content_type(headers).map_err(Failure::Bad)?;
    let declared = check_declared_length(headers, state.body_limit).map_err(Failure::Bad)?;
    let mut reserved = state.body_budget.reserve(declared).await;
    let bytes = body::read(&mut body, declared.unwrap_or(0), state.body_limit)
        .await
        .map_err(Failure::Bad)?;
    state
        .body_budget
        .settle(&mut reserved, &bytes)
        .map_err(Failure::TooComplex)?;
    Ok((bytes, reserved))
}

/// The error answer for a request that got no AdmissionReview back.
fn failure_response(state: &AppState, label: &'static str, failure: Failure) -> Response {
    match failure {
        Failure::Bad(bad) => {
            state.metrics.bad_request(bad.reason());
            tracing::warn!(endpoint = label, reason = bad.reason(), error = %bad, "bad admission request");
            let status = StatusCode::from_u16(bad.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            error_response(status, &bad.to_string(), bad.reason())
        }
        Failure::TooComplex(TooComplex { estimate, budget }) => {
            state.metrics.bad_request("too_complex");
            tracing::warn!(
                endpoint = label,
                estimate,
                budget,
                "request body would decode past the body budget"
            );
            let message = format!(
                "request body would take about {estimate} bytes decoded, more than the body budget of {budget}"
            );
            error_response(StatusCode::PAYLOAD_TOO_LARGE, &message, "too_complex")
        }
        Failure::Panicked => {
            state.metrics.error("internal");
            tracing::error!(endpoint = label, "admission handler panicked");
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error while deciding",
                "internal",
            )
        }
    }
}

/// kube-apiserver always sends `application/json`; anything else is not
/// an AdmissionReview we would parse the way the sender meant.
fn check_content_type(headers: &HeaderMap) -> Result<(), BadReview> {
    let found = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let media_type = found.split(';').next().unwrap_or_default().trim();
    if media_type.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(BadReview::WrongContentType { found })
    }
}

/// The declared length, refused early when already over the limit.
fn check_declared_length(headers: &HeaderMap, limit: usize) -> Result<Option<usize>, BadReview> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(length) if length > limit as u64 => Err(BadReview::TooLarge { limit }),
        Some(length) => Ok(usize::try_from(length).ok()),
        None => Ok(None),
    }
}

/// One line per gated decision; everything else at debug.
fn log_decision(endpoint: &'static str, admitted: &Admitted, elapsed: Duration) {
    let intent = &admitted.intent;
    let decision = if admitted.decision.allowed {
        "allowed"
    } else {
        "denied"
    };
    // Microsecond precision is plenty and keeps log lines short.
    let duration_ms = (elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0;
    if intent.kind.is_gated() {
        tracing::info!(
            uid = admitted.uid.as_str(),
            endpoint,
            intent = intent.kind.name(),
            user = intent.requester.username.as_str(),
            object = described(&intent.target).as_str(),
            decision,
            policies = policy_names(&admitted.decision.outcomes).as_str(),
            record = admitted.record.as_deref().unwrap_or(""),
            break_glass = admitted.decision.break_glass.is_some(),
            dry_run = intent.dry_run,
            duration_ms,
            "admission decision"
        );
    } else {
        tracing::debug!(
            uid = admitted.uid.as_str(),
            endpoint,
            intent = intent.kind.name(),
            user = intent.requester.username.as_str(),
            object = described(&intent.target).as_str(),
            decision,
            duration_ms,
            "not gated"
        );
    }
}

/// `pods/eviction db/postgres-0`, `namespaces/finalize legacy`. Built as
/// text and logged as a string: a `Display` field goes through the
/// formatting machinery once per piece.
fn described(target: &ObjectRef) -> String {
    let mut text = String::with_capacity(
        target.resource.len()
            + target.name.len()
            + target.namespace.as_ref().map_or(0, String::len)
            + 24,
    );
    text.push_str(&target.resource);
    if !target.group.is_empty() {
        text.push('.');
        text.push_str(&target.group);
    }
    if let Some(sub) = &target.subresource {
        text.push('/');
        text.push_str(sub);
    }
    text.push(' ');
    if let Some(ns) = &target.namespace {
        text.push_str(ns);
        text.push('/');
    }
    text.push_str(&target.name);
    text
}

/// The names of the policies that fired, comma-separated.
fn policy_names(outcomes: &[PolicyOutcome]) -> String {
    let mut names = String::with_capacity(outcomes.iter().map(|o| o.policy.len() + 1).sum());
    for (i, outcome) in outcomes.iter().enumerate() {
        if i > 0 {
            names.push(',');
        }
        names.push_str(&outcome.policy);
    }
    names
}

fn endpoint_label(endpoint: Endpoint) -> &'static str {
    match endpoint {
        Endpoint::Validate => "validate",
        Endpoint::Mutate => "mutate",
    }
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

fn error_response(status: StatusCode, error: &str, reason: &str) -> Response {
    let body = serde_json::json!({ "error": error, "reason": reason });
    json_response(status, body.to_string().into_bytes())
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let readiness = state.health.readiness(state.engine.cluster().as_ref());
    let status = if readiness.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = serde_json::to_vec(&readiness).unwrap_or_default();
    json_response(status, body)
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    match metrics::render(&state.registry) {
        Ok(text) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(metrics::OPENMETRICS_CONTENT_TYPE),
            )],
            text,
        )
            .into_response(),
        Err(_) => error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "metrics encoding failed",
            "metrics",
        ),
    }
}

async fn not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, "no such route", "not_found")
}

#[cfg(test)]
mod tests;
