//! What a namespace still contains before its finalizers go.
//!
//! Force-finalizing a namespace that still holds objects orphans them in
//! etcd (invisible, never cleaned up, resurrected if the namespace is
//! re-created): the counts say what would be stranded.

use super::request::is_kind;
use super::{Facts, NamespaceFacts};
use crate::admission::Request;
use crate::cluster::ClusterView;
use crate::cluster::record::Namespace;
use crate::intent::Intent;

pub(super) fn gather(
    facts: &mut Facts,
    intent: &Intent,
    request: &Request,
    view: &dyn ClusterView,
) {
    let name = intent.target.name.clone();
    let from_request = [request.old_object.as_ref(), request.object.as_ref()]
        .into_iter()
        .flatten()
        .filter(|object| is_kind(object, "Namespace"))
        .find_map(|object| Namespace::from_dynamic(object).ok());
    let namespace = match from_request {
        found @ Some(_) => found,
        None => match view.namespace(&name) {
            Ok(ns) => ns.map(|ns| (*ns).clone()),
            Err(why) => return facts.unknown("namespace", why),
        },
    };
    let counts = match view.namespace_counts(&name) {
        Ok(counts) => counts,
        Err(why) => return facts.unknown("namespace", why),
    };
    let total = counts.values().sum();
    facts.namespace = Some(NamespaceFacts {
        exists: namespace.is_some(),
        phase: namespace.and_then(|ns| ns.phase),
        name,
        counts,
        total,
        empty: total == 0,
        counted_kinds: view.counted_kinds(),
    });
}
