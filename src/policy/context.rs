//! The document conditions and templates read.
//!
//! `{request, object, oldObject, facts, intent, target, requester, record,
//! settings, now}`: the AdmissionRequest as the API server sent it, the
//! facts, and the classified intent with a few conveniences (`intent.type`,
//! `intent.removedFinalizers`, ...) so policies never depend on how the
//! intent enum happens to serialize.
//!
//! Each root becomes JSON (through serde) the first time a path reads it
//! during an evaluation, with only the members the loaded policies read
//! ([`Reads`]), so a root or member no policy reads is never built: the
//! shipped policies never read the request or its objects. A path that
//! needs the whole document (`$..uid`) builds it from the roots (and makes
//! every root read whole).

use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::EvalInput;
use super::catalog;
use super::path::{Plan, Root, Selected};
use super::reads::Reads;
use crate::facts::Facts;
use crate::intent::{IntentKind, ObjectRef, Requester};

/// What one evaluation reads, each root built when first read.
pub struct Context<'a> {
    source: Source<'a>,
    /// Each root's JSON, in [`Root::ALL`] order.
    roots: [OnceCell<Value>; Root::ALL.len()],
    /// The whole document, for paths that need it.
    whole: OnceCell<Value>,
}

enum Source<'a> {
    Input(&'a EvalInput<'a>, &'a Reads),
    /// A ready JSON document (unit tests, hand-built contexts).
    Json(&'a Value),
}

/// The intent plus conveniences that do not depend on the enum's encoding.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IntentDocument<'a> {
    kind: &'a IntentKind,
    target: &'a ObjectRef,
    requester: &'a Requester,
    dry_run: bool,
    #[serde(rename = "type")]
    type_name: &'static str,
    removed_finalizers: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    object_deleting: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    already_terminating: Option<bool>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SettingsDocument<'a> {
    break_glass_group: &'a str,
}

impl<'a> Context<'a> {
    /// A context over `input` whose roots hold what `reads` names.
    pub fn new(input: &'a EvalInput<'a>, reads: &'a Reads) -> Self {
        Self::with_source(Source::Input(input, reads))
    }

    /// A context over a JSON document shaped like the real one.
    pub fn from_json(document: &'a Value) -> Self {
        Self::with_source(Source::Json(document))
    }

    fn with_source(source: Source<'a>) -> Self {
        Self {
            source,
            roots: Default::default(),
            whole: OnceCell::new(),
        }
    }

    /// The JSON of `root`; `None` when a JSON document lacks it.
    fn root(&self, root: Root) -> Option<&Value> {
        match self.source {
            Source::Json(document) => document.get(root.name()),
            Source::Input(input, reads) => {
                // `Root::ALL` lists the roots in declaration order.
                let cell = &self.roots[root as usize];
                Some(cell.get_or_init(|| root_json(input, reads, root)))
            }
        }
    }

    fn whole(&self) -> &Value {
        match self.source {
            Source::Json(document) => document,
            Source::Input(..) => self.whole.get_or_init(|| {
                Value::Object(
                    Root::ALL
                        .into_iter()
                        .map(|root| {
                            let json = self.root(root).cloned().unwrap_or_default();
                            (root.name().to_owned(), json)
                        })
                        .collect(),
                )
            }),
        }
    }

    /// The values `plan` selects, nulls included, in document order.
    pub fn select(&self, plan: &Plan) -> Selected<'_> {
        let mut out = Selected::new();
        plan.select(|root| self.root(root), || self.whole(), &mut out);
        out
    }

    /// The roots built so far.
    #[cfg(test)]
    pub fn built(&self) -> Vec<Root> {
        Root::ALL
            .into_iter()
            .filter(|root| self.roots[*root as usize].get().is_some())
            .collect()
    }

    /// The whole document as JSON (what a general JSONPath runs on).
    #[cfg(test)]
    pub fn to_json(&self) -> Value {
        self.whole().clone()
    }

    /// The value at member names `keys` inside `root`, if any.
    pub fn get(&self, root: Root, keys: &[&str]) -> Option<&Value> {
        keys.iter()
            .try_fold(self.root(root)?, |value, key| value.get(key))
    }

    /// Whether `object` or `oldObject` is in the request.
    pub fn has_object(&self, root: Root) -> bool {
        self.root(root).is_some_and(Value::is_object)
    }
}

/// `root`'s JSON for this evaluation, with the members `reads` names.
fn root_json(input: &EvalInput<'_>, reads: &Reads, root: Root) -> Value {
    let intent = input.intent;
    match root {
        Root::Request => reads.to_json(root, input.request),
        Root::Object => reads.to_json(root, &input.request.object),
        Root::OldObject => reads.to_json(root, &input.request.old_object),
        Root::Facts => reads.to_json(root, input.facts),
        Root::Intent => reads.to_json(root, &intent_document(input)),
        Root::Target => reads.to_json(root, &intent.target),
        Root::Requester => reads.to_json(root, &intent.requester),
        Root::Record => record_name(input).map_or(Value::Null, Value::String),
        Root::Settings => reads.to_json(
            root,
            &SettingsDocument {
                break_glass_group: input.break_glass_group,
            },
        ),
        Root::Now => Value::String(input.now.to_string()),
    }
}

fn intent_document<'a>(input: &EvalInput<'a>) -> IntentDocument<'a> {
    let intent = input.intent;
    let (removed, object_deleting, already_terminating) = match &intent.kind {
        IntentKind::FinalizerRemoval { removed, deleting } => {
            (removed.as_slice(), Some(*deleting), None)
        }
        IntentKind::NamespaceFinalize { removed } => (removed.as_slice(), None, None),
        IntentKind::ForceDelete {
            already_terminating,
        } => (&[][..], None, Some(*already_terminating)),
        _ => (&[][..], None, None),
    };
    IntentDocument {
        kind: &intent.kind,
        target: &intent.target,
        requester: &intent.requester,
        dry_run: intent.dry_run,
        type_name: intent.kind.name(),
        removed_finalizers: removed,
        object_deleting,
        already_terminating,
    }
}

/// Records are named from the UID the cluster view vouches for.
fn record_name(input: &EvalInput<'_>) -> Option<String> {
    crate::record_name::of_facts(input.facts)
}

/// Unknown fact groups, keyed by normalized group name, with the reason.
pub fn unknown_groups(facts: &Facts) -> BTreeMap<String, String> {
    facts
        .unknown
        .iter()
        .map(|(group, why)| (catalog::normalize_group(group), why.to_string()))
        .collect()
}
