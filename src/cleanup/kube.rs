//! Live backend: ForceDeletion objects through the Kubernetes API.
//!
//! Create-or-get: `create` is the only write. When the record already exists
//! (the second admission call of a grace-0 delete, a retry, another replica)
//! the API answers AlreadyExists and the existing record wins untouched, so
//! nothing is duplicated and the verifier's status is never overwritten.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResourceExt};

use super::crd::{ForceDeletion, ForceDeletionSpec};
use super::metrics::{Backend, CleanupMetrics, RecordResult};
use super::{RecordError, Recorder, record_name_for};

/// Field manager for everything forcegate writes.
pub const FIELD_MANAGER: &str = "forcegate";

/// Label on every record, for `kubectl get fd -l`.
const NAMESPACE_LABEL: &str = "forcegate.dev/namespace";

#[derive(Clone)]
pub struct KubeRecorder {
    api: Api<ForceDeletion>,
    metrics: Option<CleanupMetrics>,
}

impl KubeRecorder {
    pub fn new(client: Client) -> Self {
        Self {
            api: Api::all(client),
            metrics: None,
        }
    }

    /// Count records written in `forcegate_cleanup_records_total`.
    pub fn with_metrics(mut self, metrics: CleanupMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Returns the record's name and whether this call created it.
    pub async fn create_or_get(
        &self,
        spec: ForceDeletionSpec,
    ) -> Result<(String, bool), RecordError> {
        let name = record_name_for(&spec);
        let mut record = ForceDeletion::new(&name, spec);
        record.metadata.labels = Some(labels(&record.spec));
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PostParams::default()
        };
        // A record deleted between our create and get is created again, once.
        for _ in 0..2 {
            match self.api.create(&params, &record).await {
                Ok(_) => {
                    tracing::info!(record = %name, subject = %record.spec.subject, "cleanup record created");
                    return Ok((name, true));
                }
                Err(kube::Error::Api(status)) if status.is_already_exists() => {
                    match self.api.get_opt(&name).await? {
                        Some(existing) => {
                            if existing.spec.object.uid != record.spec.object.uid {
                                tracing::warn!(
                                    record = %name,
                                    existing = ?existing.spec.object.uid,
                                    requested = ?record.spec.object.uid,
                                    "existing cleanup record names another object; keeping it"
                                );
                            }
                            return Ok((name, false));
                        }
                        None => continue,
                    }
                }
                Err(err) => return Err(err.into()),
            }
        }
        Err(RecordError::Backend(format!(
            "record {name} was deleted twice while being created"
        )))
    }
}

impl Recorder for KubeRecorder {
    fn record(&self, spec: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>> {
        Box::pin(async move {
            let started = Instant::now();
            let result = self.create_or_get(spec).await;
            if let Some(metrics) = &self.metrics {
                let outcome = match &result {
                    Ok((_, true)) => RecordResult::Created,
                    Ok((_, false)) => RecordResult::Existing,
                    Err(_) => RecordResult::Error,
                };
                metrics.observe_record(Backend::Kube, outcome, started.elapsed().as_secs_f64());
            }
            result.map(|(name, _)| name)
        })
    }
}

fn labels(spec: &ForceDeletionSpec) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([(
        "app.kubernetes.io/managed-by".to_string(),
        "forcegate".to_string(),
    )]);
    // Namespace names are DNS-1123 labels, hence valid label values.
    if let Some(ns) = spec.object.namespace.as_ref().filter(|ns| ns.len() <= 63) {
        labels.insert(NAMESPACE_LABEL.into(), ns.clone());
    }
    labels
}

/// Server-side apply the ForceDeletion CRD and wait until it is Established.
pub async fn apply_crd(client: Client, timeout: Duration) -> Result<(), RecordError> {
    let api: Api<CustomResourceDefinition> = Api::all(client);
    let crd = ForceDeletion::crd();
    let name = ForceDeletion::crd_name();
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&crd),
    )
    .await?;
    let established = await_condition(api, name, conditions::is_crd_established());
    match tokio::time::timeout(timeout, established).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(err)) => Err(RecordError::Backend(format!(
            "waiting for CRD {name}: {err}"
        ))),
        Err(_) => Err(RecordError::Backend(format!(
            "CRD {name} not Established after {timeout:?}"
        ))),
    }
}

#[cfg(test)]
mod tests;
