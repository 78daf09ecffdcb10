//! The document conditions and templates read.
//!
//! `{request, object, oldObject, facts, intent, target, requester, record,
//! settings, now}`: the AdmissionRequest as the API server sent it, the
//! facts, and the classified intent with a few conveniences (`intent.type`,
//! `intent.removedFinalizers`, ...) so policies never depend on how the
//! intent enum happens to serialize.
//!
//! The document is never built as a whole for a simple path: a [`Context`]
//! reads it straight from the typed request, facts and intent (see
//! [`extract`](super::extract)). Only a JSONPath the simple walk cannot take
//! (`$..name`, filters, slices) turns it into JSON, once per evaluation.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::rc::Rc;

use kube::core::DynamicObject;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::EvalInput;
use super::catalog;
use super::extract::{self, Plan, Step};
use crate::admission::Request;
use crate::facts::Facts;
use crate::intent::{Intent, IntentKind, ObjectRef, Requester};

/// What one evaluation reads, built lazily.
pub struct Context<'a> {
    source: Source<'a>,
    /// The whole document as JSON, for general JSONPath queries only.
    json: OnceCell<Value>,
    /// Selections already made, by path text: policies read the same few
    /// paths many times (`facts.node.name` five times in one remediation,
    /// `facts.node.fenced` in three policies). A short list beats a map here.
    selected: RefCell<Vec<Selected>>,
}

/// A path's text and the values it selected.
type Selected = (Box<str>, Rc<[Value]>);

enum Source<'a> {
    Typed(Box<Document<'a>>),
    /// A ready JSON document (unit tests, hand-built contexts).
    Json(&'a Value),
}

/// The document's shape; serializing it gives the JSON policies see.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    request: &'a Request,
    object: Option<&'a DynamicObject>,
    old_object: Option<&'a DynamicObject>,
    facts: &'a Facts,
    intent: IntentDocument<'a>,
    target: &'a ObjectRef,
    requester: &'a Requester,
    /// The cleanup record's name, from this UID: named only when read.
    #[serde(rename = "record", serialize_with = "as_record_name")]
    record_uid: Option<&'a str>,
    settings: SettingsDocument<'a>,
    #[serde(serialize_with = "as_text")]
    now: k8s_openapi::jiff::Timestamp,
}

/// The intent plus conveniences that do not depend on the enum's encoding.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IntentDocument<'a> {
    #[serde(flatten)]
    intent: &'a Intent,
    #[serde(rename = "type")]
    kind: &'static str,
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

fn as_record_name<S: Serializer>(uid: &Option<&str>, serializer: S) -> Result<S::Ok, S::Error> {
    match uid {
        Some(uid) => serializer.serialize_some(&crate::cleanup::record_name(uid)),
        None => serializer.serialize_none(),
    }
}

fn as_text<S: Serializer>(value: &impl Display, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

impl<'a> Context<'a> {
    pub fn new(input: &EvalInput<'a>) -> Self {
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
        // The record is named after the object's UID; an eviction's request
        // carries no pod, so fall back to the pod the facts found.
        let record = intent
            .target
            .uid
            .as_deref()
            .or(input.facts.pod.as_ref().map(|p| p.uid.as_str()))
            .filter(|uid| !uid.is_empty());
        let document = Document {
            request: input.request,
            object: input.request.object.as_ref(),
            old_object: input.request.old_object.as_ref(),
            facts: input.facts,
            intent: IntentDocument {
                intent,
                kind: intent.kind.name(),
                removed_finalizers: removed,
                object_deleting,
                already_terminating,
            },
            target: &intent.target,
            requester: &intent.requester,
            record_uid: record,
            settings: SettingsDocument {
                break_glass_group: &input.settings.break_glass_group,
            },
            now: input.now,
        };
        Self {
            source: Source::Typed(Box::new(document)),
            json: OnceCell::new(),
            selected: RefCell::default(),
        }
    }

    /// A context over a JSON document shaped like the real one.
    pub fn from_json(document: &'a Value) -> Self {
        Self {
            source: Source::Json(document),
            json: OnceCell::new(),
            selected: RefCell::default(),
        }
    }

    /// The values a compiled path selects.
    pub fn select(&self, plan: &Plan) -> Vec<Value> {
        match &self.source {
            Source::Typed(document) => extract::run_with(
                plan,
                |steps, out| document.select(steps, out),
                || {
                    self.json.get_or_init(|| {
                        // Strings, numbers, bools and string-keyed maps cannot
                        // fail to serialize; a failure reads as an empty document.
                        serde_json::to_value(document.as_ref()).unwrap_or(Value::Null)
                    })
                },
            ),
            Source::Json(value) => extract::run(plan, *value, || value),
        }
    }

    /// The non-null values at `plan`, selected once per evaluation: `path`
    /// is the text `plan` was compiled from (the document never changes
    /// during an evaluation, so the same path always selects the same).
    pub fn select_once(&self, path: &str, plan: &Plan) -> Rc<[Value]> {
        if let Some((_, values)) = self.selected.borrow().iter().find(|(p, _)| **p == *path) {
            return Rc::clone(values);
        }
        let mut values = self.select(plan);
        values.retain(|v| !v.is_null());
        let values: Rc<[Value]> = values.into();
        self.selected
            .borrow_mut()
            .push((path.into(), Rc::clone(&values)));
        values
    }

    /// The whole document as JSON (what a general JSONPath runs on).
    #[cfg(test)]
    pub fn to_json(&self) -> Value {
        self.select(&Plan::Whole(
            jsonpath_rust::parser::parse_json_path("$").expect("`$` parses"),
        ))
        .into_iter()
        .next()
        .unwrap_or(Value::Null)
    }

    /// The value at `keys` (e.g. `["facts", "pod", "labels"]`), if any.
    pub fn get(&self, keys: &[&str]) -> Option<Value> {
        let steps = keys.iter().map(|k| Step::Key((*k).to_owned())).collect();
        self.select(&Plan::Walk(steps)).into_iter().next()
    }

    /// Whether `object` or `oldObject` is in the request.
    pub fn has_object(&self, root: &str) -> bool {
        match &self.source {
            Source::Typed(document) => match root {
                "object" => document.object.is_some(),
                "oldObject" => document.old_object.is_some(),
                _ => false,
            },
            Source::Json(value) => value.get(root).is_some_and(Value::is_object),
        }
    }
}

impl Document<'_> {
    /// Walk `steps` from the root, going straight to the member the first
    /// step names rather than serializing the document to skip the others
    /// (a fifth of a decision's instructions went to that). Members with
    /// their own serialization (`record`, `now`) take the general way.
    fn select(&self, steps: &[Step], out: &mut Vec<Value>) {
        let Some((Step::Key(root), rest)) = steps.split_first() else {
            return extract::select(self, steps, out);
        };
        match root.as_str() {
            "facts" => select_facts(self.facts, rest, out),
            "target" => extract::select(self.target, rest, out),
            "intent" => extract::select(&self.intent, rest, out),
            "requester" => extract::select(self.requester, rest, out),
            "request" => extract::select(self.request, rest, out),
            "object" => extract::select(&self.object, rest, out),
            "oldObject" => extract::select(&self.old_object, rest, out),
            "settings" => extract::select(&self.settings, rest, out),
            _ => extract::select(self, steps, out),
        }
    }
}

/// Walk `steps` inside the facts, going straight to the group the first
/// step names: the `Serialize` walk would offer all eleven groups to be
/// skipped by name, for each of the ~8 fact paths a decision reads. A name
/// not listed here takes that general walk.
fn select_facts(facts: &Facts, steps: &[Step], out: &mut Vec<Value>) {
    let Some((Step::Key(group), rest)) = steps.split_first() else {
        return extract::select(facts, steps, out);
    };
    match group.as_str() {
        "pod" => extract::select(&facts.pod, rest, out),
        "node" => extract::select(&facts.node, rest, out),
        "owners" => extract::select(&facts.owners, rest, out),
        "leader" => extract::select(&facts.leader, rest, out),
        "volumes" => extract::select(&facts.volumes, rest, out),
        "endpoints" => extract::select(&facts.endpoints, rest, out),
        "finalizers" => extract::select(&facts.finalizers, rest, out),
        "claim" => extract::select(&facts.claim, rest, out),
        "persistentVolume" => extract::select(&facts.persistent_volume, rest, out),
        "namespace" => extract::select(&facts.namespace, rest, out),
        _ => extract::select(facts, steps, out),
    }
}

/// Unknown fact groups, keyed by normalized group name, with the reason.
pub fn unknown_groups(facts: &Facts) -> BTreeMap<String, String> {
    facts
        .unknown
        .iter()
        .map(|(group, why)| (catalog::normalize_group(group), why.to_string()))
        .collect()
}
