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

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt::Display;

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
}

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
    record: Option<String>,
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
            .filter(|uid| !uid.is_empty())
            .map(crate::cleanup::record_name);
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
            record,
            settings: SettingsDocument {
                break_glass_group: &input.settings.break_glass_group,
            },
            now: input.now,
        };
        Self {
            source: Source::Typed(Box::new(document)),
            json: OnceCell::new(),
        }
    }

    /// A context over a JSON document shaped like the real one.
    pub fn from_json(document: &'a Value) -> Self {
        Self {
            source: Source::Json(document),
            json: OnceCell::new(),
        }
    }

    /// The values a compiled path selects.
    pub fn select(&self, plan: &Plan) -> Vec<Value> {
        match &self.source {
            Source::Typed(document) => extract::run(plan, document.as_ref(), || {
                self.json.get_or_init(|| {
                    // Strings, numbers, bools and string-keyed maps cannot
                    // fail to serialize; a failure reads as an empty document.
                    serde_json::to_value(document.as_ref()).unwrap_or(Value::Null)
                })
            }),
            Source::Json(value) => extract::run(plan, *value, || value),
        }
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

/// Unknown fact groups, keyed by normalized group name, with the reason.
pub fn unknown_groups(facts: &Facts) -> BTreeMap<String, String> {
    facts
        .unknown
        .iter()
        .map(|(group, why)| (catalog::normalize_group(group), why.to_string()))
        .collect()
}
