//! The seam between transport and decision: bytes in, bytes out.
//!
//! The server and `forcegate review` both call [`Engine::admit`], which is why
//! they answer byte-identically for the same policies, cluster and request.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use k8s_openapi::jiff::Timestamp;

use crate::admission::{self, BadReview, Request};
use crate::cleanup::{self, Recorder};
use crate::cluster::ClusterView;
use crate::decision::Decision;
use crate::facts::{self, Facts};
use crate::intent::{self, Intent, IntentKind};
use crate::policy::{EvalInput, PolicyMetrics, PolicySet};

/// Which webhook the API server called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// Decides; records cleanups for allowed force deletions.
    Validate,
    /// Never denies; annotates allowed finalizer strips with their record.
    Mutate,
}

/// Knobs that change decisions or side effects, shared by `serve` and `review`.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Members may break glass on objects annotated `forcegate.dev/break-glass`.
    pub break_glass_group: String,
    /// How long recording a cleanup may take inside one admission call.
    pub record_timeout: Duration,
    /// Deny when the record cannot be written (the record is the contract).
    pub deny_without_record: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            break_glass_group: "forcegate:break-glass".into(),
            record_timeout: Duration::from_secs(3),
            deny_without_record: true,
        }
    }
}

/// One admission call's result, for the response and for logs and metrics.
#[derive(Debug)]
pub struct Admitted {
    /// The AdmissionReview response, exactly as sent.
    pub body: Vec<u8>,
    pub uid: String,
    pub intent: Intent,
    pub decision: Decision,
    /// Name of the ForceDeletion written (or found) for this call.
    pub record: Option<String>,
}

/// Policies, cluster view and recorder, wired once at start.
pub struct Engine {
    policies: Arc<ArcSwap<PolicySet>>,
    cluster: Arc<dyn ClusterView>,
    recorder: Arc<dyn Recorder>,
    settings: Settings,
    /// Counts fired policies (`forcegate_policy_outcomes_total`) when set.
    policy_metrics: Option<PolicyMetrics>,
}

impl Engine {
    pub fn new(
        policies: Arc<ArcSwap<PolicySet>>,
        cluster: Arc<dyn ClusterView>,
        recorder: Arc<dyn Recorder>,
        settings: Settings,
    ) -> Self {
        Self {
            policies,
            cluster,
            recorder,
            settings,
            policy_metrics: None,
        }
    }

    /// Count the policies behind every `/validate` decision.
    pub fn with_policy_metrics(mut self, metrics: PolicyMetrics) -> Self {
        self.policy_metrics = Some(metrics);
        self
    }

    pub fn policies(&self) -> &Arc<ArcSwap<PolicySet>> {
        &self.policies
    }

    pub fn cluster(&self) -> &Arc<dyn ClusterView> {
        &self.cluster
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Decode, classify, gather facts, evaluate, record, encode.
    pub async fn admit(&self, body: &[u8], endpoint: Endpoint) -> Result<Admitted, BadReview> {
        let request = admission::decode(body)?;
        let intent = intent::classify(&request);
        let (facts, decision) = self.decide(&intent, &request);
        let (decision, record, patch) = match endpoint {
            Endpoint::Mutate => mutation(&intent, &facts, &request, decision),
            Endpoint::Validate => {
                // Once per request: /mutate evaluates the same policies again.
                if let Some(metrics) = &self.policy_metrics {
                    metrics.observe(&decision);
                }
                let (decision, record) = self.record(&intent, &facts, decision).await;
                (decision, record, None)
            }
        };
        let body = admission::encode(&admission::respond(&request, &decision, patch));
        Ok(Admitted {
            body,
            uid: request.uid,
            intent,
            decision,
            record,
        })
    }

    /// Write the cleanup record an allowed force deletion needs; a record
    /// that cannot be written turns into a denial or a warning
    /// (`Settings::deny_without_record`).
    async fn record(
        &self,
        intent: &Intent,
        facts: &Facts,
        decision: Decision,
    ) -> (Decision, Option<String>) {
        if !decision.allowed || !decision.record || intent.dry_run {
            return (decision, None);
        }
        // Only an object the cluster view vouches for is recorded.
        if crate::record_name::of_facts(facts).is_none() {
            let reason = unidentified(facts);
            return (record_failed(decision, &self.settings, &reason), None);
        }
        let spec = cleanup::plan(intent, facts, &decision, Timestamp::now());
        let timeout = self.settings.record_timeout;
        match tokio::time::timeout(timeout, self.recorder.record(spec)).await {
            Ok(Ok(name)) => (decision, Some(name)),
            Ok(Err(err)) => {
                tracing::warn!(error = %err, "could not write cleanup record");
                let reason = err.to_string();
                (record_failed(decision, &self.settings, &reason), None)
            }
            Err(_) => {
                tracing::warn!(?timeout, "cleanup record timed out");
                let reason = format!("timed out after {timeout:?}");
                (record_failed(decision, &self.settings, &reason), None)
            }
        }
    }

    /// The pure part: facts and policies (no I/O).
    pub fn decide(&self, intent: &Intent, request: &Request) -> (Facts, Decision) {
        if !intent.kind.is_gated() {
            return (Facts::default(), Decision::allow());
        }
        let now = Timestamp::now();
        // One snapshot of the set, for what to gather and what to evaluate.
        let policies = self.policies.load();
        let facts = facts::gather_for(
            intent,
            request,
            self.cluster.as_ref(),
            now,
            policies.needs(),
        );
        let input = EvalInput {
            intent,
            facts: &facts,
            request,
            break_glass_group: &self.settings.break_glass_group,
            now,
        };
        let decision = policies.evaluate(&input);
        (facts, decision)
    }
}

/// For `/mutate`: never deny; annotate an allowed finalizer strip or namespace
/// finalize with the name of its (deterministic) cleanup record.
fn mutation(
    intent: &Intent,
    facts: &Facts,
    request: &Request,
    decision: Decision,
) -> (Decision, Option<String>, Option<json_patch::Patch>) {
    let strips = matches!(
        intent.kind,
        IntentKind::FinalizerRemoval { .. } | IntentKind::NamespaceFinalize { .. }
    );
    let allowed = Decision {
        allowed: true,
        ..decision.clone()
    };
    if !(decision.allowed && decision.record && strips) {
        return (
            Decision {
                message: String::new(),
                ..allowed
            },
            None,
            None,
        );
    }
    match crate::record_name::of_facts(facts) {
        Some(name) => {
            let patch = cleanup::annotation_patch(request, &name);
            (allowed, Some(name), patch)
        }
        None => (allowed, None, None),
    }
}

/// Why the request's object has no identity to name a record from.
fn unidentified(facts: &Facts) -> String {
    facts.unknown.get("identity").map_or_else(
        || "the object is not in forcegate's view of the cluster".to_owned(),
        |why| why.reason.clone(),
    )
}

fn record_failed(mut decision: Decision, settings: &Settings, reason: &str) -> Decision {
    let text = format!("forcegate could not record the cleanup for this force deletion ({reason})");
    if settings.deny_without_record {
        decision.allowed = false;
        decision.message = format!(
            "{text}; the record is required, retry shortly or ask an admin to check forcegate"
        );
    } else {
        decision
            .warnings
            .push(format!("{text}; nobody will verify the aftermath"));
    }
    decision
}
