//! From raw objects to evidence, one kind at a time, through the typed
//! k8s-openapi objects (so a malformed object is rejected as the API would).

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;

use serde_json::Value;

use super::candidates::{self, haystack};
use super::decode;
use super::{
    ApiServiceState, AttachmentState, Candidate, ClaimState, Condition, Evidence, NamespaceState,
    NodeState, PodState, Terminating, VolumeState, WebhookState, kinds,
};
use crate::oncall::inventory::{group_kind, str_at};

const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";
/// The object, when it has a deletionTimestamp.
pub(super) fn terminating(object: &Value) -> Option<Terminating> {
    let meta: ObjectMeta = serde_json::from_value(object.get("metadata")?.clone()).ok()?;
    let deletion = meta.deletion_timestamp?.0;
    let api_version = str_at(object, &["apiVersion"]).to_owned();
    let kind = str_at(object, &["kind"]).to_owned();
    let spec_finalizers = object
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .filter(|_| kind == "Namespace")
        .collect();
    Some(Terminating {
        group_kind: group_kind(&api_version, &kind),
        api_version,
        kind,
        namespace: meta.namespace.filter(|ns| !ns.is_empty()),
        name: meta.name.unwrap_or_default(),
        uid: meta.uid.unwrap_or_default(),
        deletion_timestamp: deletion,
        finalizers: meta.finalizers.unwrap_or_default(),
        spec_finalizers,
    })
}

/// Add what `object` (of kind `Kind.group`) tells; other kinds add nothing.
pub(super) fn add(evidence: &mut Evidence, kind: &str, object: &Value) -> Result<(), String> {
    let now = evidence.now;
    match kind {
        kinds::NODE => {
            let node: Node = decode(object)?;
            let state = node_state(node);
            evidence.nodes.insert(state.name.clone(), state);
        }
        kinds::POD => {
            let pod: Pod = decode(object)?;
            let (state, candidate) = pod_state(pod);
            evidence.pods.push(state);
            evidence.candidates.push(candidate);
        }
        kinds::CLAIM => {
            let claim: PersistentVolumeClaim = decode(object)?;
            let namespace = claim.metadata.namespace.unwrap_or_default();
            let name = claim.metadata.name.unwrap_or_default();
            let volume = claim
                .spec
                .and_then(|s| s.volume_name)
                .filter(|v| !v.is_empty());
            let key = (namespace.clone(), name.clone());
            evidence.claims.insert(
                key,
                ClaimState {
                    namespace,
                    name,
                    volume,
                },
            );
        }
        kinds::VOLUME => {
            let volume: PersistentVolume = decode(object)?;
            let name = volume.metadata.name.unwrap_or_default();
            let claim = (volume.spec.and_then(|s| s.claim_ref))
                .map(|r| (r.namespace.unwrap_or_default(), r.name.unwrap_or_default()));
            let phase = volume.status.and_then(|s| s.phase);
            evidence
                .volumes
                .insert(name.clone(), VolumeState { name, phase, claim });
        }
        kinds::ATTACHMENT => {
            let va: VolumeAttachment = decode(object)?;
            evidence.attachments.push(AttachmentState {
                name: va.metadata.name.unwrap_or_default(),
                volume: va.spec.source.persistent_volume_name.unwrap_or_default(),
                node: va.spec.node_name,
                attached: va.status.is_some_and(|s| s.attached),
            });
        }
        kinds::NAMESPACE => {
            let ns: Namespace = decode(object)?;
            let status = ns.status.unwrap_or_default();
            let conditions = (status.conditions.unwrap_or_default().into_iter())
                .map(|c| Condition {
                    type_: c.type_,
                    status: c.status,
                    reason: c.reason.unwrap_or_default(),
                    message: c.message.unwrap_or_default(),
                })
                .collect();
            let name = ns.metadata.name.unwrap_or_default();
            let state = NamespaceState {
                name: name.clone(),
                phase: status.phase,
                conditions,
            };
            evidence.namespaces.insert(name, state);
        }
        kinds::API_SERVICE => {
            let service: APIService = decode(object)?;
            let available = (service
                .status
                .and_then(|s| s.conditions)
                .into_iter()
                .flatten())
            .find(|c| c.type_ == "Available")
            .map(|c| Condition {
                type_: c.type_,
                status: c.status,
                reason: c.reason.unwrap_or_default(),
                message: c.message.unwrap_or_default(),
            });
            evidence.api_services.push(ApiServiceState {
                name: service.metadata.name.unwrap_or_default(),
                service: (service.spec.and_then(|s| s.service))
                    .map(|s| (s.namespace.unwrap_or_default(), s.name.unwrap_or_default())),
                available,
            });
        }
        kinds::VALIDATING => {
            let config: ValidatingWebhookConfiguration = decode(object)?;
            let hooks = (config.webhooks.unwrap_or_default().into_iter())
                .map(|h| (h.name, h.failure_policy, h.client_config.service, h.rules));
            let name = format!(
                "ValidatingWebhookConfiguration/{}",
                config.metadata.name.unwrap_or_default()
            );
            evidence
                .webhooks
                .extend(hooks.map(|hook| webhook(&name, hook)));
        }
        kinds::MUTATING => {
            let config: MutatingWebhookConfiguration = decode(object)?;
            let hooks = (config.webhooks.unwrap_or_default().into_iter())
                .map(|h| (h.name, h.failure_policy, h.client_config.service, h.rules));
            let name = format!(
                "MutatingWebhookConfiguration/{}",
                config.metadata.name.unwrap_or_default()
            );
            evidence
                .webhooks
                .extend(hooks.map(|hook| webhook(&name, hook)));
        }
        kinds::SLICE => {
            let slice: EndpointSlice = decode(object)?;
            let labels = slice.metadata.labels.unwrap_or_default();
            if let Some(service) = labels.get("kubernetes.io/service-name") {
                let ready = (slice.endpoints.iter().flatten())
                    .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
                    .count();
                let key = (
                    slice.metadata.namespace.unwrap_or_default(),
                    service.clone(),
                );
                *evidence.ready_endpoints.entry(key).or_default() += ready;
            }
        }
        kinds::DEPLOYMENT | kinds::STATEFUL_SET | kinds::DAEMON_SET | kinds::LEASE => {
            evidence
                .candidates
                .push(candidates::candidate(kind, object, now)?);
        }
        _ => {}
    }
    Ok(())
}

fn node_state(node: Node) -> NodeState {
    let status = node.status.unwrap_or_default();
    let ready = (status.conditions.into_iter().flatten()).find(|c| c.type_ == "Ready");
    let taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
    NodeState {
        name: node.metadata.name.unwrap_or_default(),
        ready_since: ready
            .as_ref()
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0),
        heartbeat: ready
            .as_ref()
            .and_then(|c| c.last_heartbeat_time.as_ref())
            .map(|t| t.0),
        ready: ready.map(|c| c.status),
        fenced: taints.iter().any(|t| t.key == OUT_OF_SERVICE),
    }
}

fn pod_state(pod: Pod) -> (PodState, Candidate) {
    let spec = pod.spec.unwrap_or_default();
    let status = pod.status.unwrap_or_default();
    let ready =
        (status.conditions.iter().flatten()).any(|c| c.type_ == "Ready" && c.status == "True");
    let phase = status.phase;
    let claims = (spec.volumes.iter().flatten())
        .filter_map(|v| {
            v.persistent_volume_claim
                .as_ref()
                .map(|c| c.claim_name.clone())
        })
        .collect();
    let images: Vec<&str> = spec
        .containers
        .iter()
        .filter_map(|c| c.image.as_deref())
        .collect();
    let alive = phase.as_deref() == Some("Running") && ready;
    let state = format!(
        "{}{}",
        phase.as_deref().unwrap_or("Pending"),
        if ready { ", ready" } else { ", not ready" }
    );
    let candidate = Candidate {
        kind: "Pod".into(),
        haystack: haystack(&pod.metadata, &images, &[]),
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        name: pod.metadata.name.clone().unwrap_or_default(),
        alive,
        state,
    };
    let state = PodState {
        namespace: pod.metadata.namespace.unwrap_or_default(),
        name: pod.metadata.name.unwrap_or_default(),
        node: spec.node_name.filter(|n| !n.is_empty()),
        phase,
        claims,
        terminating: pod.metadata.deletion_timestamp.is_some(),
        ready,
    };
    (state, candidate)
}

/// One webhook of a configuration: name, failurePolicy, Service, rules.
type Hook = (
    String,
    Option<String>,
    Option<ServiceReference>,
    Option<Vec<RuleWithOperations>>,
);

fn webhook(configuration: &str, (name, failure_policy, service, rules): Hook) -> WebhookState {
    let rules = rules.unwrap_or_default();
    let operations = (rules.iter())
        .flat_map(|r| r.operations.iter().flatten().cloned())
        .collect();
    let resources = (rules.iter())
        .flat_map(|r| {
            let groups = r.api_groups.clone().unwrap_or_default();
            let resources = r.resources.clone().unwrap_or_default();
            resources.into_iter().flat_map(move |res| {
                groups
                    .iter()
                    .map(move |g| {
                        if g.is_empty() {
                            res.clone()
                        } else {
                            format!("{res}.{g}")
                        }
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    WebhookState {
        configuration: configuration.to_owned(),
        name,
        failure_policy: failure_policy.unwrap_or_else(|| "Fail".into()),
        service: service.map(|s| (s.namespace, s.name)),
        operations,
        resources,
    }
}
