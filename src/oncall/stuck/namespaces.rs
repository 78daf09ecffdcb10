//! A Terminating namespace: what its conditions say, what it still holds,
//! and the cluster-wide blockers its controller cannot get past (an
//! APIService that is not Available, a failing-closed webhook without
//! ready endpoints).

use super::{Diagnosis, Level, describe_counts};
use crate::oncall::evidence::{Evidence, Terminating, kinds};

/// Conditions the namespace controller sets while it cannot finish.
const CONDITIONS: [&str; 5] = [
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
];

pub(super) fn namespace(evidence: &Evidence, object: &Terminating, d: &mut Diagnosis) {
    let name = object.name.as_str();
    if let Some(state) = evidence.namespaces.get(name) {
        for condition in (state.conditions.iter())
            .filter(|c| c.status == "True" && CONDITIONS.contains(&c.type_.as_str()))
        {
            d.finding(
                "namespace-condition",
                format!("{}: {}", condition.type_, condition.message),
            );
        }
    }
    contents(evidence, object, d);
    let blocked = blockers(evidence, d);
    if !blocked && evidence.contents.get(name).is_none_or(|c| c.is_empty()) {
        // Nothing left and nothing in the way: the namespace controller's turn.
        let check = crate::oncall::controllers::kube_controller_manager(evidence);
        super::controller_advice(object, &check, d);
        d.controllers.push(check);
    }
}

/// What the namespace still holds, and which of it waits on finalizers.
fn contents(evidence: &Evidence, object: &Terminating, d: &mut Diagnosis) {
    let name = object.name.as_str();
    let read = if evidence.gaps.is_empty() {
        ""
    } else {
        " (of the kinds that could be read)"
    };
    let Some(counts) = evidence.contents.get(name).filter(|c| !c.is_empty()) else {
        d.finding("content-remaining", format!("holds no objects{read}"));
        return;
    };
    d.finding(
        "content-remaining",
        format!("still holds {}{read}", describe_counts(counts.iter())),
    );
    let held: Vec<String> = (evidence.terminating.iter())
        .filter(|t| t.namespace.as_deref() == Some(name) && !t.finalizers.is_empty())
        .map(|t| format!("{} {}", t.kind, t.name))
        .collect();
    if held.is_empty() {
        d.advise(
            Level::Wait,
            "the namespace controller deletes what remains",
            Vec::new(),
        );
    } else {
        d.finding(
            "finalizers-remaining",
            format!("waiting on finalizers: {}", held.join(", ")),
        );
        d.advise(
            Level::Wait,
            format!(
                "the namespace goes once {} {} gone; each is diagnosed in this list",
                held.join(", "),
                if held.len() == 1 { "is" } else { "are" }
            ),
            Vec::new(),
        );
    }
}

/// Cluster-wide blockers; true if any.
fn blockers(evidence: &Evidence, d: &mut Diagnosis) -> bool {
    let mut blocked = false;
    for api in &evidence.api_services {
        let Some(available) = api.available.as_ref().filter(|c| c.status != "True") else {
            continue;
        };
        blocked = true;
        let group = api
            .name
            .split_once('.')
            .map_or(api.name.as_str(), |(_, g)| g);
        let backend = api
            .service
            .as_ref()
            .map(|(ns, svc)| format!(" (Service {ns}/{svc})"))
            .unwrap_or_default();
        d.finding(
            "apiservice-unavailable",
            format!("APIService {} is not Available ({}: {}): the namespace controller cannot list {group}, so it cannot finish deleting any namespace", api.name, available.reason, available.message),
        );
        d.advise(
            Level::Human,
            format!("restore the backend of APIService {}{backend}; if that API was uninstalled for good, delete the APIService", api.name),
            vec![format!("kubectl get apiservice {} -o yaml", api.name), format!("kubectl delete apiservice {}", api.name)],
        );
    }
    for gap in evidence
        .gaps
        .iter()
        .filter(|g| g.what.starts_with("discovery "))
    {
        blocked = true;
        d.finding("discovery-failure", format!("{}: {}", gap.what, gap.reason));
    }
    let failing_closed = (evidence.webhooks.iter()).filter(|hook| {
        hook.service.is_some()
            && hook.failure_policy == "Fail"
            && ["DELETE", "UPDATE", "*"]
                .iter()
                .any(|op| hook.operations.contains(*op))
    });
    for hook in failing_closed {
        let Some((ns, svc)) = hook.service.as_ref() else {
            continue;
        };
        if !evidence.has(kinds::SLICE) {
            d.cannot_tell(format!(
                "whether webhook {} has ready endpoints: {}",
                hook.name,
                evidence.missing(kinds::SLICE)
            ));
            continue;
        }
        if evidence
            .ready_endpoints
            .get(&(ns.clone(), svc.clone()))
            .is_some_and(|n| *n > 0)
        {
            continue;
        }
        blocked = true;
        let ops: Vec<&str> = hook.operations.iter().map(String::as_str).collect();
        d.finding(
            "webhook-no-endpoints",
            format!("webhook {} ({}) fails closed (failurePolicy Fail) and Service {ns}/{svc} has no ready endpoints: every {} of {} it matches is rejected, including the namespace controller's", hook.name, hook.configuration, ops.join("/"), hook.resources.join(", ")),
        );
        let (kind, config) = hook
            .configuration
            .split_once('/')
            .unwrap_or(("", &hook.configuration));
        d.advise(
            Level::Human,
            format!("bring back the webhook's backend (Service {ns}/{svc}); if it was uninstalled, delete {}", hook.configuration),
            vec![
                format!("kubectl -n {ns} get endpointslices -l kubernetes.io/service-name={svc}"),
                format!("kubectl delete {} {config}", kind.to_lowercase()),
            ],
        );
    }
    blocked
}
