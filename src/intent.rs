//! What an admission request really is.
//!
//! Pure classification of an AdmissionReview into an [`Intent`]: no I/O, no
//! cluster lookups. Everything it needs is in the request itself (the user,
//! the options the API server already adjusted, object and oldObject).

use kube::core::admission::Operation;
use serde::Serialize;

use crate::admission::Request;

pub mod actors;
pub mod match_conditions;
mod object;

/// The object a request acts on, as the API server named it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural resource name, e.g. `pods`.
    pub resource: String,
    /// e.g. `eviction`, `finalize`, `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    /// UID of the existing object (from oldObject), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// Who sent the request (AdmissionRequest.userInfo).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requester {
    pub username: String,
    pub groups: Vec<String>,
}

/// A system component whose own deletes and finalizer removals must never be
/// blocked (blocking them leaves objects stuck Terminating cluster-wide).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "actor")]
pub enum SystemActor {
    /// `system:node:<node>` finishing a pod bound to that very node.
    Kubelet { node: String },
    /// The pod garbage collector force-deleting orphaned pods.
    PodGc,
    /// The controller that owns the finalizer it removes (namespace, job, GC, ...).
    Controller { name: String },
}

/// What the request means for force-deletion gating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum IntentKind {
    /// A grace-0 DELETE of a pod the kubelet would otherwise finish
    /// gracefully, or a `pods/status` UPDATE that marks such a pod
    /// Succeeded/Failed (the API server then deletes it with grace 0:
    /// `target.subresource` is `status`).
    ForceDelete {
        /// The pod already had a deletionTimestamp (re-deleted with grace 0).
        already_terminating: bool,
    },
    /// `pods/eviction` CREATE whose deleteOptions ask for grace 0.
    Eviction,
    /// An UPDATE that removes `metadata.finalizers`, through the object, its
    /// `status` subresource or `namespaces/finalize`.
    FinalizerRemoval {
        removed: Vec<String>,
        /// The object already has a deletionTimestamp.
        deleting: bool,
    },
    /// UPDATE on `namespaces/finalize` that removes `spec.finalizers` only.
    NamespaceFinalize { removed: Vec<String> },
    /// The kubelet, pod GC or an owning controller doing its own job.
    SystemFinalization { actor: SystemActor },
    /// Anything else; `reason` says why it is not a candidate.
    NotGated { reason: String },
}

impl IntentKind {
    /// Every [`IntentKind::name`], for metrics that export each from zero.
    pub const NAMES: [&'static str; 6] = [
        "ForceDelete",
        "Eviction",
        "FinalizerRemoval",
        "NamespaceFinalize",
        "SystemFinalization",
        "NotGated",
    ];

    /// The name policies match on (`spec.match.intents`).
    pub fn name(&self) -> &'static str {
        match self {
            IntentKind::ForceDelete { .. } => "ForceDelete",
            IntentKind::Eviction => "Eviction",
            IntentKind::FinalizerRemoval { .. } => "FinalizerRemoval",
            IntentKind::NamespaceFinalize { .. } => "NamespaceFinalize",
            IntentKind::SystemFinalization { .. } => "SystemFinalization",
            IntentKind::NotGated { .. } => "NotGated",
        }
    }

    /// Whether policies run at all for this intent.
    pub fn is_gated(&self) -> bool {
        !matches!(
            self,
            IntentKind::SystemFinalization { .. } | IntentKind::NotGated { .. }
        )
    }
}

/// A classified request: what, on which object, by whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    pub kind: IntentKind,
    pub target: ObjectRef,
    pub requester: Requester,
    /// `request.dryRun`: evaluate, but record nothing.
    pub dry_run: bool,
}

/// Classify one admission request. Pure.
pub fn classify(request: &Request) -> Intent {
    let requester = Requester {
        username: request.user_info.username.clone().unwrap_or_default(),
        groups: request.user_info.groups.clone().unwrap_or_default(),
    };
    let kind = kind_of(request, &requester);
    Intent {
        kind,
        target: target_of(request),
        requester,
        dry_run: request.dry_run,
    }
}

fn kind_of(request: &Request, requester: &Requester) -> IntentKind {
    let resource = &request.resource;
    let core = resource.group.is_empty();
    let subresource = request.sub_resource.as_deref().unwrap_or_default();
    match (&request.operation, resource.resource.as_str(), subresource) {
        (Operation::Delete, "pods", "") if core => pod_delete(request, requester),
        (Operation::Delete, _, _) => not_gated(format!(
            "DELETE of {} has no grace period to skip",
            resource_name(request)
        )),
        (Operation::Create, "pods", "eviction") if core => eviction(request),
        (Operation::Update, "namespaces", "finalize") if core => {
            namespace_finalize(request, requester)
        }
        (Operation::Update, "pods", "status") if core => pod_status(request, requester),
        (Operation::Update, _, _) => finalizer_update(request, requester),
        (operation, _, _) => not_gated(format!(
            "{operation:?} of {} is not a deletion",
            resource_name(request)
        )),
    }
}

/// A pod DELETE is a force delete only when the *adjusted* grace period is 0
/// for a pod the kubelet would otherwise finish: the API server itself sets 0
/// for unscheduled and terminal pods, and the kubelet and pod GC finish pods
/// with grace 0 as their normal job.
fn pod_delete(request: &Request, requester: &Requester) -> IntentKind {
    let grace = request
        .options
        .as_ref()
        .and_then(|options| options.0.get("gracePeriodSeconds"))
        .and_then(serde_json::Value::as_i64);
    match grace {
        None => return not_gated("graceful delete: no gracePeriodSeconds in the delete options"),
        Some(0) => {}
        Some(seconds) => {
            return not_gated(format!("graceful delete (gracePeriodSeconds={seconds})"));
        }
    }
    let pod = request.old_object.as_ref();
    let node = pod.and_then(|pod| object::str_at(pod, &["spec", "nodeName"]));
    if let Some(actor) = actors::pod_finalizer(requester, node) {
        return IntentKind::SystemFinalization { actor };
    }
    if let Some(pod) = pod {
        if let Some(phase) = object::terminal_phase(pod) {
            return not_gated(format!(
                "pod phase is {phase}: the API server deletes terminal pods with grace 0"
            ));
        }
        if node.is_none() {
            return not_gated(
                "pod is not scheduled to a node: the API server deletes it with grace 0",
            );
        }
    }
    // Without oldObject (never sent by a real API server) the pod's state is
    // unknown here; gate it and let the facts look the pod up.
    IntentKind::ForceDelete {
        already_terminating: pod.is_some_and(|pod| pod.metadata.deletion_timestamp.is_some()),
    }
}

/// Evictions never reach DELETE webhooks; the grace period the eviction asks
/// for is in the Eviction object's `deleteOptions`.
fn eviction(request: &Request) -> IntentKind {
    let grace = request
        .object
        .as_ref()
        .and_then(|eviction| object::at(eviction, &["deleteOptions", "gracePeriodSeconds"]))
        .and_then(serde_json::Value::as_i64);
    match grace {
        Some(0) => IntentKind::Eviction,
        Some(seconds) => not_gated(format!("graceful eviction (gracePeriodSeconds={seconds})")),
        None => not_gated("eviction with the pod's own grace period"),
    }
}

/// `PUT namespaces/<ns>/finalize` persists `spec.finalizers` and
/// `metadata.finalizers` alike. Dropping only spec entries is a namespace
/// finalize; dropping any metadata entry is a finalizer removal (every
/// removed entry listed), so the policies for metadata finalizers apply
/// whichever route took them.
fn namespace_finalize(request: &Request, requester: &Requester) -> IntentKind {
    let old = object::finalizers(request.old_object.as_ref(), &["spec", "finalizers"]);
    let new = object::finalizers(request.object.as_ref(), &["spec", "finalizers"]);
    let spec_removed = object::removed(&old, &new);
    let metadata_removed = removed_metadata_finalizers(request);
    let spec_owner = [actors::NAMESPACE_SPEC_FINALIZER_OWNER];
    let spec_actor = actors::owning_controller(requester, &spec_removed, &spec_owner);
    let metadata_actor = actors::owning_controller(
        requester,
        &metadata_removed,
        actors::METADATA_FINALIZER_OWNERS,
    );
    let system = |actor| IntentKind::SystemFinalization { actor };
    match (spec_removed.is_empty(), metadata_removed.is_empty()) {
        (true, true) => not_gated("namespaces/finalize removes no finalizers"),
        (false, true) => spec_actor.map_or(
            IntentKind::NamespaceFinalize {
                removed: spec_removed,
            },
            system,
        ),
        (true, false) => metadata_actor.map_or_else(
            || IntentKind::FinalizerRemoval {
                removed: metadata_removed,
                deleting: is_deleting(request),
            },
            system,
        ),
        (false, false) => match (spec_actor, metadata_actor) {
            (Some(actor), Some(_)) => system(actor),
            _ => IntentKind::FinalizerRemoval {
                removed: [metadata_removed, spec_removed].concat(),
                deleting: is_deleting(request),
            },
        },
    }
}

/// A `pods/status` UPDATE that moves a scheduled pod to Succeeded/Failed
/// tells the API server the kubelet is done: the next delete of the pod is
/// a grace-0 delete that no webhook sees as forced. Only the pod's own
/// kubelet and the pod GC / node lifecycle controllers do that as their
/// job; anyone else is gated as a force delete of the pod. Any other
/// status update is a finalizer removal or nothing.
fn pod_status(request: &Request, requester: &Requester) -> IntentKind {
    let old = request.old_object.as_ref();
    let was_terminal = old.and_then(object::terminal_phase).is_some();
    let now_terminal = request.object.as_ref().and_then(object::terminal_phase);
    let (Some(phase), false) = (now_terminal, was_terminal) else {
        return finalizer_update(request, requester);
    };
    let node = old.and_then(|pod| object::str_at(pod, &["spec", "nodeName"]));
    if node.is_none() {
        return not_gated(format!(
            "pod is not scheduled to a node: marking it {phase} stops nothing"
        ));
    }
    if let Some(actor) = actors::pod_status_finisher(requester, node) {
        return IntentKind::SystemFinalization { actor };
    }
    IntentKind::ForceDelete {
        already_terminating: is_deleting(request),
    }
}

/// Any UPDATE (of the object or its `status` subresource, which persists
/// metadata too) that drops `metadata.finalizers`.
fn finalizer_update(request: &Request, requester: &Requester) -> IntentKind {
    if request.old_object.is_none() || request.object.is_none() {
        return not_gated("UPDATE without object and oldObject");
    }
    let removed = removed_metadata_finalizers(request);
    if removed.is_empty() {
        return not_gated("UPDATE removes no finalizers");
    }
    match actors::owning_controller(requester, &removed, actors::METADATA_FINALIZER_OWNERS) {
        Some(actor) => IntentKind::SystemFinalization { actor },
        None => IntentKind::FinalizerRemoval {
            removed,
            deleting: is_deleting(request),
        },
    }
}

/// `metadata.finalizers` of oldObject missing from object.
fn removed_metadata_finalizers(request: &Request) -> Vec<String> {
    let finalizers = |object: Option<&kube::core::DynamicObject>| {
        object
            .and_then(|o| o.metadata.finalizers.clone())
            .unwrap_or_default()
    };
    object::removed(
        &finalizers(request.old_object.as_ref()),
        &finalizers(request.object.as_ref()),
    )
}

/// Either version of the object carries a deletionTimestamp.
fn is_deleting(request: &Request) -> bool {
    [&request.old_object, &request.object]
        .into_iter()
        .flatten()
        .any(|o| o.metadata.deletion_timestamp.is_some())
}

fn not_gated(reason: impl Into<String>) -> IntentKind {
    IntentKind::NotGated {
        reason: reason.into(),
    }
}

fn resource_name(request: &Request) -> String {
    let resource = &request.resource;
    let mut name = resource.resource.clone();
    if !resource.group.is_empty() {
        name = format!("{name}.{}", resource.group);
    }
    if let Some(sub) = request.sub_resource.as_deref().filter(|s| !s.is_empty()) {
        name = format!("{name}/{sub}");
    }
    name
}

/// The object acted on. For an eviction that is the pod, not the Eviction.
/// DeleteCollection sends an empty `request.name`: the object's name is used.
fn target_of(request: &Request) -> ObjectRef {
    let resource = &request.resource;
    let subresource = request.sub_resource.clone().filter(|s| !s.is_empty());
    let existing = request.old_object.as_ref().or(request.object.as_ref());
    let is_eviction = resource.group.is_empty()
        && resource.resource == "pods"
        && subresource.as_deref() == Some("eviction");
    let (group, version, kind) = if is_eviction {
        (
            resource.group.clone(),
            resource.version.clone(),
            "Pod".to_owned(),
        )
    } else {
        (
            request.kind.group.clone(),
            request.kind.version.clone(),
            request.kind.kind.clone(),
        )
    };
    let name = Some(request.name.clone())
        .filter(|n| !n.is_empty())
        .or_else(|| existing.and_then(|o| o.metadata.name.clone()))
        .unwrap_or_default();
    // Requests on a namespace carry its own name as `namespace`, but a
    // Namespace is cluster-scoped.
    let cluster_scoped_namespace = resource.group.is_empty() && resource.resource == "namespaces";
    let namespace = if cluster_scoped_namespace {
        None
    } else {
        request
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .or_else(|| existing.and_then(|o| o.metadata.namespace.clone()))
    };
    // An Eviction names its pod's UID only as a precondition the caller
    // chose: the pod's identity comes from the cluster view instead.
    let uid = if is_eviction {
        None
    } else {
        existing.and_then(|o| o.metadata.uid.clone())
    };
    ObjectRef {
        group,
        version,
        kind,
        resource: resource.resource.clone(),
        subresource,
        namespace,
        name,
        uid: uid.filter(|u| !u.is_empty()),
    }
}

#[cfg(test)]
mod tests;
