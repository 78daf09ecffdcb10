//! The document conditions and templates read.
//!
//! `{request, object, oldObject, facts, intent, target, requester, record,
//! settings, now}`: the AdmissionRequest as the API server sent it, the
//! facts, and the classified intent with a few conveniences (`intent.type`,
//! `intent.removedFinalizers`, ...) so policies never depend on how the
//! intent enum happens to serialize.
//!
//! The document is never built as a whole for a simple path: a [`Context`]
//! reads the facts, intent, target, requester, settings and record as typed
//! values ([`typed`]), the request and its objects through their `Serialize`
//! impls (see [`extract`](super::extract)). Only a JSONPath that must see the
//! whole document (`$..name`, a filter that refers to `$`) turns it into
//! JSON, once per evaluation.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::ops::Range;

use kube::core::DynamicObject;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::EvalInput;
use super::catalog;
use super::extract::typed::{self, Walk};
use super::extract::{self, PathKey, Plan, Rest, Step};
use crate::admission::Request;
use crate::facts::Facts;
use crate::intent::{IntentKind, ObjectRef, Requester};

mod walk;

/// What one evaluation reads, built lazily.
pub struct Context<'a> {
    source: Source<'a>,
    /// The whole document as JSON, for general JSONPath queries only.
    json: OnceCell<Value>,
    /// Selections already made, by path: policies read the same few paths
    /// many times (`facts.node.name` five times in one remediation,
    /// `facts.node.fenced` in three policies).
    selected: RefCell<Selections>,
    /// Template holes already written, by path.
    texts: RefCell<Texts>,
}

/// The values of every path selected so far, in one list: no allocation
/// per path, and a short list beats a map here.
#[derive(Default)]
struct Selections {
    values: Vec<Value>,
    /// Path and its values' range in `values`.
    memo: Vec<(PathKey, Range<usize>)>,
}

impl Selections {
    fn get(&self, path: PathKey) -> Option<&[Value]> {
        let (_, range) = self.memo.iter().find(|(p, _)| *p == path)?;
        Some(&self.values[range.clone()])
    }
}

/// The text of each hole written so far, in one buffer.
#[derive(Default)]
struct Texts {
    text: String,
    /// Path, its text's range in `text`, and whether it had any value.
    memo: Vec<(PathKey, Range<usize>, bool)>,
}

enum Source<'a> {
    Typed(Document<'a>),
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
    /// The record's name once a typed walk has read it.
    #[serde(skip)]
    record_name: OnceCell<Option<String>>,
    settings: SettingsDocument<'a>,
    #[serde(serialize_with = "as_text")]
    now: k8s_openapi::jiff::Timestamp,
}

/// The intent plus conveniences that do not depend on the enum's encoding.
/// The intent's own members are listed rather than flattened in: serde's
/// `flatten` goes through a map serializer that copies every key.
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

fn as_record_name<S: Serializer>(uid: &Option<&str>, serializer: S) -> Result<S::Ok, S::Error> {
    match uid {
        Some(uid) => serializer.serialize_some(&crate::record_name::record_name(uid)),
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
        // Records are named from the UID the cluster view vouches for.
        let record = input
            .facts
            .identity
            .as_ref()
            .map(|identity| identity.uid.as_str());
        let document = Document {
            request: input.request,
            object: input.request.object.as_ref(),
            old_object: input.request.old_object.as_ref(),
            facts: input.facts,
            intent: IntentDocument {
                kind: &intent.kind,
                target: &intent.target,
                requester: &intent.requester,
                dry_run: intent.dry_run,
                type_name: intent.kind.name(),
                removed_finalizers: removed,
                object_deleting,
                already_terminating,
            },
            target: &intent.target,
            requester: &intent.requester,
            record_uid: record,
            record_name: OnceCell::new(),
            settings: SettingsDocument {
                break_glass_group: &input.settings.break_glass_group,
            },
            now: input.now,
        };
        Self {
            source: Source::Typed(document),
            json: OnceCell::new(),
            // Sized for the shipped policies (about 15 paths and 10 holes
            // per request) so that neither grows one step at a time.
            selected: RefCell::new(Selections {
                values: Vec::with_capacity(16),
                memo: Vec::with_capacity(16),
            }),
            texts: RefCell::new(Texts {
                text: String::with_capacity(512),
                memo: Vec::with_capacity(16),
            }),
        }
    }

    /// A context over a JSON document shaped like the real one.
    pub fn from_json(document: &'a Value) -> Self {
        Self {
            source: Source::Json(document),
            json: OnceCell::new(),
            selected: RefCell::default(),
            texts: RefCell::default(),
        }
    }

    /// The values a compiled path selects.
    pub fn select(&self, plan: &Plan) -> Vec<Value> {
        match &self.source {
            Source::Typed(document) => {
                if let Some(values) = document.select_typed(plan) {
                    return values;
                }
                extract::run_with(
                    plan,
                    |steps, out| document.select(steps, out),
                    || {
                        self.json.get_or_init(|| {
                            // Strings, numbers, bools and string-keyed maps cannot
                            // fail to serialize; a failure reads as an empty document.
                            serde_json::to_value(document).unwrap_or(Value::Null)
                        })
                    },
                )
            }
            Source::Json(value) => extract::run(plan, *value, || value),
        }
    }

    /// `with` the non-null values at `plan`, selected once per evaluation:
    /// `path` is the key of the text `plan` was compiled from (the document
    /// never changes during an evaluation, so the same path always selects
    /// the same). `with` must not select through this context.
    pub fn with_selected<R>(
        &self,
        path: PathKey,
        plan: &Plan,
        with: impl FnOnce(&[Value]) -> R,
    ) -> R {
        if let Some(values) = self.selected.borrow().get(path) {
            return with(values);
        }
        let mut selected = self.selected.borrow_mut();
        let start = selected.values.len();
        self.select_into(plan, &mut selected.values);
        let end = selected.values.len();
        selected.memo.push((path, start..end));
        with(&selected.values[start..end])
    }

    /// Append the non-null values at `plan`. Typed values go straight into
    /// the list, without a `Vec` of their own.
    fn select_into(&self, plan: &Plan, out: &mut Vec<Value>) {
        if let Source::Typed(document) = &self.source
            && document.reach_typed(plan, &mut |value| {
                if !value.is_null() {
                    out.push(value.to_json());
                }
            })
        {
            return;
        }
        out.extend(self.select(plan).into_iter().filter(|v| !v.is_null()));
    }

    /// Append the non-null values at `plan` as a message shows them (each
    /// [`Walk::push_text`], joined by ", "); whether there were any. Typed
    /// values are written as they are, never turned into JSON, and the text
    /// is kept: templates repeat holes (`facts.node.name` three times in one
    /// remediation) that conditions never select.
    pub fn push_text(&self, path: PathKey, plan: &Plan, out: &mut String) -> bool {
        let texts = self.texts.borrow();
        if let Some(&(_, ref range, any)) = texts.memo.iter().find(|(p, ..)| *p == path) {
            out.push_str(&texts.text[range.clone()]);
            return any;
        }
        drop(texts);
        let start = out.len();
        let mut count = 0;
        self.visit(path, plan, &mut |value| {
            if count > 0 {
                out.push_str(", ");
            }
            value.push_text(out);
            count += 1;
        });
        let texts = &mut *self.texts.borrow_mut();
        let kept = texts.text.len()..texts.text.len() + (out.len() - start);
        texts.text.push_str(&out[start..]);
        texts.memo.push((path, kept, count > 0));
        count > 0
    }

    /// Call `visit` with each non-null value at `plan`, as
    /// [`select_once`](Self::select_once) would select them, typed where
    /// the document has them so. A path already selected is read from the
    /// memo; one not yet selected is not added to it.
    fn visit(&self, path: PathKey, plan: &Plan, visit: &mut dyn FnMut(&dyn Walk)) {
        if let Some(values) = self.selected.borrow().get(path) {
            return values.iter().for_each(|v| visit(v));
        }
        let mut non_null = |value: &dyn Walk| {
            if !value.is_null() {
                visit(value);
            }
        };
        if let Source::Typed(document) = &self.source
            && document.reach_typed(plan, &mut non_null)
        {
            return;
        }
        self.select(plan).iter().for_each(|v| non_null(v));
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
    /// The members walked as typed values (see [`typed`]): all but the
    /// request, its objects and `now`.
    fn typed_root(&self, root: &str) -> Option<&dyn Walk> {
        match root {
            "facts" => Some(self.facts),
            "target" => Some(self.target),
            "requester" => Some(self.requester),
            "intent" => Some(&self.intent),
            "settings" => Some(&self.settings),
            "record" => Some(
                self.record_name
                    .get_or_init(|| self.record_uid.map(crate::record_name::record_name)),
            ),
            _ => None,
        }
    }

    /// What `plan` selects, when it walks a typed member from start to end
    /// (filters included); `None` sends it the general way.
    fn select_typed(&self, plan: &Plan) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        self.reach_typed(plan, &mut |found| out.push(found.to_json()))
            .then_some(out)
    }

    /// Call `visit` with what `plan` reaches, when it walks a typed member
    /// from start to end (filters included); false sends it the general way.
    fn reach_typed(&self, plan: &Plan, visit: &mut dyn FnMut(&dyn Walk)) -> bool {
        let (steps, rest) = match plan {
            Plan::Walk(steps) => (steps, None),
            Plan::Rooted {
                prefix,
                rest: Rest::Walk(rest),
            } => (prefix, Some(rest)),
            _ => return false,
        };
        let Some((Step::Key(root), steps)) = steps.split_first() else {
            return false;
        };
        let Some(root) = self.typed_root(root) else {
            return false;
        };
        match rest {
            None => typed::reach(root, steps, visit),
            Some(rest) => typed::reach_rooted(root, steps, rest, visit),
        }
        true
    }

    /// Walk `steps` from the root, going straight to the member the first
    /// step names rather than serializing the document to skip the others
    /// (a fifth of a decision's instructions went to that). `now`, with
    /// its own serialization, takes the general way.
    fn select(&self, steps: &[Step], out: &mut Vec<Value>) {
        let Some((Step::Key(root), rest)) = steps.split_first() else {
            return extract::select(self, steps, out);
        };
        if let Some(typed) = self.typed_root(root) {
            return typed::walk(typed, rest, out);
        }
        match root.as_str() {
            "request" => extract::select(self.request, rest, out),
            "object" => extract::select(&self.object, rest, out),
            "oldObject" => extract::select(&self.old_object, rest, out),
            _ => extract::select(self, steps, out),
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
