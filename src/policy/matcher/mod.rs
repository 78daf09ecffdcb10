//! Which requests a policy applies to (`match`) and who it never applies to
//! (`exclude`), with the same resource and selector semantics as Kubernetes
//! webhook rules so operators do not have to learn a second dialect.

use std::collections::BTreeMap;

use serde_json::Value;

use super::condition::{Missing, Scope, Verdict};
use super::context::Context;
use super::error::Problems;
use super::model::{self, Located};
use super::path::Root;
use super::reads::Reads;
use crate::intent::Intent;

mod patterns;
#[cfg(test)]
mod tests;

use patterns::{Exclusions, Glob, LabelSelector, ResourcePattern, SelectorOp};

/// Intents a policy may name. SystemFinalization and NotGated never reach
/// policies: the engine allows them before evaluation.
pub const GATED_INTENTS: &[&str] = &[
    "ForceDelete",
    "Eviction",
    "FinalizerRemoval",
    "NamespaceFinalize",
];

/// A compiled `match` + `exclude`.
#[derive(Clone, Debug)]
pub struct Matcher {
    intents: Vec<&'static str>,
    resources: Option<Vec<ResourcePattern>>,
    namespaces: Option<Vec<Glob>>,
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
    exclude: Exclusions,
}

impl Matcher {
    /// Whether matching may read fact group `group`: label selectors read
    /// `facts.namespace.labels` and, for evictions, `facts.pod.labels`.
    pub fn may_read(&self, group: &str) -> bool {
        match group {
            "namespace" => self.namespace_selector.is_some(),
            "pod" => self.object_selector.is_some(),
            _ => false,
        }
    }

    /// Add what the label selectors read: the object's labels, and the
    /// namespace's or (for evictions) the pod's from the facts.
    pub fn reads(&self, reads: &mut Reads) {
        let groups = [
            (self.namespace_selector.is_some(), "namespace"),
            (self.object_selector.is_some(), "pod"),
        ];
        for (_, group) in groups.into_iter().filter(|(selects, _)| *selects) {
            reads.names(Root::Facts, &[group, "labels"]);
            for root in [Root::Object, Root::OldObject] {
                reads.names(root, &["metadata", "labels"]);
            }
        }
    }

    /// Whether the policy applies. Label selectors may need facts the
    /// cluster view lacks, hence a three-valued verdict.
    pub fn applies(&self, intent: &Intent, scope: &Scope<'_>) -> Verdict {
        if !self.intents.contains(&intent.kind.name()) {
            return Verdict::no();
        }
        if let Some(patterns) = &self.resources
            && !patterns.iter().any(|p| p.matches(intent))
        {
            return Verdict::no();
        }
        let namespace = target_namespace(intent);
        if let Some(globs) = &self.namespaces
            && !namespace.is_some_and(|ns| globs.iter().any(|g| g.matches(ns)))
        {
            return Verdict::no();
        }
        if self.exclude.covers(&intent.requester, namespace) {
            return Verdict::no();
        }
        if self.namespace_selector.is_none() && self.object_selector.is_none() {
            return Verdict::yes(String::new());
        }
        let mut verdicts = Vec::new();
        if let Some(selector) = &self.namespace_selector {
            verdicts.push(match namespace_labels(intent, scope) {
                Ok(labels) => selector.verdict(&labels, "namespace labels"),
                Err(missing) => unknown(missing),
            });
        }
        if let Some(selector) = &self.object_selector {
            verdicts.push(match object_labels(intent, scope) {
                Ok(candidates) => Verdict::or(
                    candidates
                        .iter()
                        .map(|labels| selector.verdict(labels, "object labels")),
                ),
                Err(missing) => unknown(missing),
            });
        }
        Verdict::and(verdicts)
    }
}

fn unknown(missing: Missing) -> Verdict {
    Verdict::unknown(vec![missing])
}

fn labels_missing(what: &str, why: impl Into<String>) -> Missing {
    Missing {
        what: what.into(),
        why: why.into(),
    }
}

/// The namespace a request is about; a Namespace is its own namespace.
pub fn target_namespace(intent: &Intent) -> Option<&str> {
    match intent.target.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => Some(ns),
        _ if intent.target.resource == "namespaces" => Some(intent.target.name.as_str()),
        _ => None,
    }
}

pub(crate) type Labels = BTreeMap<String, String>;

/// The labels of `object` or `oldObject`; `None` when the request has no such object.
fn labels_at(context: &Context<'_>, root: Root) -> Option<Labels> {
    if !context.has_object(root) {
        return None;
    }
    Some(
        context
            .get(root, &["metadata", "labels"])
            .map(string_map)
            .unwrap_or_default(),
    )
}

fn string_map(value: &Value) -> Labels {
    match value {
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect(),
        _ => Labels::new(),
    }
}

/// Namespaces label themselves; for anything else the cluster view must
/// supply `facts.namespace.labels`.
fn namespace_labels(intent: &Intent, scope: &Scope<'_>) -> Result<Labels, Missing> {
    let context = scope.context;
    if intent.target.resource == "namespaces"
        && let Some(labels) =
            labels_at(context, Root::OldObject).or_else(|| labels_at(context, Root::Object))
    {
        return Ok(labels);
    }
    if let Some(reason) = scope.unknown.get("namespace") {
        return Err(labels_missing("namespace labels", reason.clone()));
    }
    match context.get(Root::Facts, &["namespace", "labels"]) {
        Some(labels @ Value::Object(_)) => Ok(string_map(labels)),
        _ => Err(labels_missing(
            "namespace labels",
            "the cluster view does not provide them",
        )),
    }
}

/// Label sets to test: object and oldObject (either may match, as in
/// Kubernetes), or the pod's labels from the facts for an eviction.
fn object_labels(intent: &Intent, scope: &Scope<'_>) -> Result<Vec<Labels>, Missing> {
    let context = scope.context;
    if intent.target.subresource.as_deref() == Some("eviction") {
        if let Some(reason) = scope.unknown.get("pod") {
            return Err(labels_missing("pod labels", reason.clone()));
        }
        return match context.get(Root::Facts, &["pod", "labels"]) {
            Some(labels @ Value::Object(_)) => Ok(vec![string_map(labels)]),
            _ => Err(labels_missing(
                "pod labels",
                "the pod is not in the cluster view",
            )),
        };
    }
    let sets: Vec<Labels> = [Root::Object, Root::OldObject]
        .into_iter()
        .filter_map(|root| labels_at(context, root))
        .collect();
    Ok(if sets.is_empty() {
        vec![Labels::new()]
    } else {
        sets
    })
}

// ---------------------------------------------------------------------------

pub(crate) fn compile(
    matches: &Located<model::Match>,
    exclude: &model::Exclude,
    problems: &mut Problems,
) -> Matcher {
    let m = &matches.value;
    let mut intents = Vec::new();
    if m.intents.is_empty() {
        problems.at(
            matches.line,
            matches.column,
            format!(
                "`match.intents` needs at least one of {}",
                GATED_INTENTS.join(", ")
            ),
        );
    }
    for intent in &m.intents {
        match GATED_INTENTS.iter().find(|i| **i == intent.value) {
            Some(known) => intents.push(*known),
            None if matches!(intent.value.as_str(), "SystemFinalization" | "NotGated") => problems.at(
                intent.line,
                intent.column,
                format!(
                    "intent `{}` never reaches policies (forcegate always allows it); use one of {}",
                    intent.value,
                    GATED_INTENTS.join(", ")
                ),
            ),
            None => problems.at(
                intent.line,
                intent.column,
                format!("unknown intent `{}`; use one of {}", intent.value, GATED_INTENTS.join(", ")),
            ),
        }
    }
    let resources = m.resources.as_ref().map(|list| {
        list.iter()
            .filter_map(|r| match ResourcePattern::parse(&r.value) {
                Ok(p) => Some(p),
                Err(e) => {
                    problems.at(r.line, r.column, e);
                    None
                }
            })
            .collect()
    });
    let globs = |list: &[Located<String>], problems: &mut Problems| -> Vec<Glob> {
        list.iter()
            .filter_map(|n| {
                let ok = !n.value.is_empty()
                    && n.value.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '*'
                    });
                if ok {
                    Some(Glob(n.value.clone()))
                } else {
                    problems.at(
                        n.line,
                        n.column,
                        format!(
                            "invalid namespace `{}`: lowercase letters, digits, `-` and `*` only",
                            n.value
                        ),
                    );
                    None
                }
            })
            .collect()
    };
    let namespaces = m.namespaces.as_deref().map(|list| globs(list, problems));
    let namespace_selector = m
        .namespace_selector
        .as_ref()
        .map(|s| compile_selector(s, problems));
    let object_selector = m
        .object_selector
        .as_ref()
        .map(|s| compile_selector(s, problems));
    let service_accounts = exclude
        .service_accounts
        .iter()
        .filter_map(|sa| match parse_service_account(&sa.value) {
            Some(pair) => Some(pair),
            None => {
                problems.at(
                    sa.line,
                    sa.column,
                    format!(
                        "invalid service account `{}`; write `namespace/name`, `namespace/*` or `system:serviceaccount:namespace:name`",
                        sa.value
                    ),
                );
                None
            }
        })
        .collect();
    Matcher {
        intents,
        resources,
        namespaces,
        namespace_selector,
        object_selector,
        exclude: Exclusions {
            users: exclude.users.clone(),
            groups: exclude.groups.clone(),
            service_accounts,
            namespaces: globs(&exclude.namespaces, problems),
        },
    }
}

fn parse_service_account(text: &str) -> Option<(String, String)> {
    let (ns, name) = match text.strip_prefix("system:serviceaccount:") {
        Some(rest) => rest.split_once(':')?,
        None => text.split_once('/')?,
    };
    (!ns.is_empty() && !name.is_empty() && !name.contains(['/', ':']))
        .then(|| (ns.to_string(), name.to_string()))
}

fn compile_selector(
    selector: &Located<model::LabelSelector>,
    problems: &mut Problems,
) -> LabelSelector {
    let mut expressions = Vec::new();
    for req in &selector.value.match_expressions {
        let op = match req.value.operator.value.as_str() {
            "In" => SelectorOp::In,
            "NotIn" => SelectorOp::NotIn,
            "Exists" => SelectorOp::Exists,
            "DoesNotExist" => SelectorOp::DoesNotExist,
            other => {
                let at = &req.value.operator;
                problems.at(
                    at.line,
                    at.column,
                    format!(
                        "unknown selector operator `{other}`; use In, NotIn, Exists or DoesNotExist"
                    ),
                );
                continue;
            }
        };
        let needs_values = matches!(op, SelectorOp::In | SelectorOp::NotIn);
        if needs_values == req.value.values.is_empty() {
            problems.at(
                req.line,
                req.column,
                if needs_values {
                    format!("`{}` needs values", req.value.operator.value)
                } else {
                    format!("`{}` takes no values", req.value.operator.value)
                },
            );
        }
        expressions.push((req.value.key.clone(), op, req.value.values.clone()));
    }
    LabelSelector {
        match_labels: selector.value.match_labels.clone(),
        expressions,
    }
}
