//! The webhooks' CEL `matchConditions` that exempt system actors, written
//! from the tables in [`actors`](super::actors).
//!
//! A matchCondition that is false skips the webhook entirely, so each one
//! must be exactly as narrow as [`classify`](super::classify): the pod's
//! own kubelet (by username *and* group), each controller only for the
//! finalizers it owns. The manifests and the Helm chart hold these texts;
//! a test fails when either drifts from what is generated here.

use super::actors::{
    self, FinalizerOwner, NODE_USER_PREFIX, NODES_GROUP, POD_DELETERS, POD_STATUS_FINISHERS,
};

const USER: &str = "request.userInfo.username";

/// The kubelet of the node the pod (oldObject) is bound to.
pub fn not_the_pods_own_kubelet() -> String {
    format!(
        "!('{NODES_GROUP}' in request.userInfo.groups && oldObject != null && \
         has(oldObject.spec.nodeName) && {USER} == '{NODE_USER_PREFIX}' + oldObject.spec.nodeName)"
    )
}

/// The pod GC (or the controller manager's shared identity) finishing pods.
pub fn not_the_pod_gc() -> String {
    not_one_of(POD_DELETERS)
}

/// The pod GC and node lifecycle controllers marking pods terminal.
pub fn not_a_pod_status_finisher() -> String {
    not_one_of(POD_STATUS_FINISHERS)
}

/// Anyone but the controller(s) owning every `metadata.finalizers` entry
/// the request removes.
pub fn not_the_metadata_finalizer_owner() -> String {
    format!(
        "!({})",
        all_removed_owned("metadata", actors::METADATA_FINALIZER_OWNERS)
    )
}

/// `namespaces/finalize`: anyone but the owners of every removed entry, of
/// `spec.finalizers` (the namespace controller) and `metadata.finalizers`.
pub fn not_the_namespace_finalizer_owner() -> String {
    format!(
        "!({} && {})",
        all_removed_owned("spec", &[actors::NAMESPACE_SPEC_FINALIZER_OWNER]),
        all_removed_owned("metadata", actors::METADATA_FINALIZER_OWNERS)
    )
}

/// Some entry of `metadata.finalizers` is gone.
pub fn removes_a_metadata_finalizer() -> String {
    removes_a_finalizer("metadata")
}

/// Some entry of `spec.finalizers` or `metadata.finalizers` is gone.
pub fn removes_a_namespace_finalizer() -> String {
    format!(
        "{} || {}",
        removes_a_finalizer("spec"),
        removes_a_finalizer("metadata")
    )
}

/// The update moves a scheduled, non-terminal pod to Succeeded or Failed.
pub fn marks_a_scheduled_pod_terminal() -> String {
    let terminal = "['Succeeded', 'Failed']";
    format!(
        "oldObject != null && object != null && has(oldObject.spec.nodeName) && \
         oldObject.spec.nodeName != '' && has(object.status.phase) && \
         object.status.phase in {terminal} && \
         !(has(oldObject.status.phase) && oldObject.status.phase in {terminal})"
    )
}

fn not_one_of(users: &[&str]) -> String {
    format!("!({USER} in {})", list(users.iter().copied()))
}

/// Every entry of `<part>.finalizers` that the update drops is owned by the
/// requester according to `owners`.
fn all_removed_owned(part: &str, owners: &[FinalizerOwner]) -> String {
    let (old, new) = (format!("oldObject.{part}"), format!("object.{part}"));
    format!(
        "({absent}{old}.finalizers.all(f, ({present}f in {new}.finalizers) || \
         ({USER} + ' ' + f) in {pairs}))",
        absent = has_not(&old),
        present = has(&new),
        pairs = list(owned_pairs(owners).iter().map(String::as_str)),
    )
}

fn removes_a_finalizer(part: &str) -> String {
    let (old, new) = (format!("oldObject.{part}"), format!("object.{part}"));
    format!(
        "(oldObject != null && object != null && {present_old}\
         {old}.finalizers.exists(f, !({present}f in {new}.finalizers)))",
        present_old = has(&old),
        present = has(&new),
    )
}

/// `has(x) && has(x.finalizers) && ` (metadata always exists).
fn has(object: &str) -> String {
    match object.ends_with(".metadata") {
        true => format!("has({object}.finalizers) && "),
        false => format!("has({object}) && has({object}.finalizers) && "),
    }
}

/// `!has(x) || !has(x.finalizers) || `.
fn has_not(object: &str) -> String {
    match object.ends_with(".metadata") {
        true => format!("!has({object}.finalizers) || "),
        false => format!("!has({object}) || !has({object}.finalizers) || "),
    }
}

/// `user finalizer` for each finalizer each identity may remove (usernames
/// and finalizer names hold no spaces); the chart's `trustedUsers` values.
pub fn owned_pairs(owners: &[FinalizerOwner]) -> Vec<String> {
    let mut pairs = Vec::new();
    for owner in owners {
        for user in owner.users {
            for finalizer in owner.finalizers {
                let pair = format!("{user} {finalizer}");
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
    }
    pairs
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = items.map(|item| format!("'{item}'")).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests;
