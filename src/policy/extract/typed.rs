//! Walking the typed parts of the evaluation context (facts, intent,
//! target, requester, settings, record) without serializing them.
//!
//! The `Serialize` walk ([`super::select`]) offers every field of a struct
//! to be skipped by name, and turns a list it passes through into JSON before
//! a filter can test it (`facts.volumes.claims[?@.attachedOnPodNode == true]`
//! built every claim, with its attachments, as JSON objects). For the facts,
//! which policies read most, that was most of a selection's cost. A [`Walk`]
//! value answers a step directly (its member by name, its element by index,
//! each of them for `[*]` and filters) and becomes JSON only where a path
//! ends. What it selects is what the JSON walk selects on its serialization;
//! the tests check that for every member of every fact.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::{RestStep, Step, json_equal};
use crate::policy::message::{self, ABSENT};

/// A value a path walks without serializing it.
pub trait Walk {
    /// The value as `serde_json::to_value` gives it.
    fn to_json(&self) -> Value;
    /// The member `key` names, when this is an object that has it.
    fn member(&self, _key: &str) -> Option<&dyn Walk> {
        None
    }
    /// Element `index`, when this is an array that long.
    fn element(&self, _index: usize) -> Option<&dyn Walk> {
        None
    }
    /// Each array element or object member value, in JSON order (objects'
    /// members sorted by name): what `[*]` selects.
    fn each(&self, _visit: &mut dyn FnMut(&dyn Walk)) {}
    /// Walked in its JSON instead (enums whose variants carry data, which
    /// policies rarely read inside).
    fn walks_as_json(&self) -> bool {
        false
    }
    /// JSON `null` (an absent option), which a selection drops.
    fn is_null(&self) -> bool {
        false
    }
    /// Append the value as a message shows it ([`message::push_value`]
    /// on its JSON), without building the JSON where the type knows how.
    fn push_text(&self, out: &mut String) {
        message::push_value(out, &self.to_json());
    }
}

/// Append the JSON of what `steps` select in `value` to `out`.
pub fn walk(value: &dyn Walk, steps: &[Step], out: &mut Vec<Value>) {
    reach(value, steps, &mut |found| out.push(found.to_json()));
}

/// Call `visit` with every value a rooted plan reaches: `prefix`, then the
/// `rest` steps and equality filters, all on typed values.
pub fn reach_rooted(
    value: &dyn Walk,
    prefix: &[Step],
    rest: &[RestStep],
    visit: &mut dyn FnMut(&dyn Walk),
) {
    reach(value, prefix, &mut |node| reach_rest(node, rest, visit));
}

/// Call `visit` with every value `steps` reach.
pub fn reach(value: &dyn Walk, steps: &[Step], visit: &mut dyn FnMut(&dyn Walk)) {
    match steps.split_first() {
        None => visit(value),
        Some(_) if value.walks_as_json() => reach(&value.to_json(), steps, visit),
        Some((step, rest)) => one_step(value, step, &mut |next| reach(next, rest, visit)),
    }
}

fn reach_rest(value: &dyn Walk, steps: &[RestStep], visit: &mut dyn FnMut(&dyn Walk)) {
    match steps.split_first() {
        None => visit(value),
        Some(_) if value.walks_as_json() => reach_rest(&value.to_json(), steps, visit),
        Some((RestStep::Step(step), rest)) => {
            one_step(value, step, &mut |next| reach_rest(next, rest, visit));
        }
        Some((
            RestStep::Equals {
                path,
                literal,
                negated,
            },
            rest,
        )) => {
            // A filter tests what `[*]` would select, by the first value
            // its path reaches (a missing value equals nothing).
            value.each(&mut |member| {
                let mut at = None;
                reach(member, path, &mut |v| {
                    at.get_or_insert_with(|| v.to_json());
                });
                if at.is_some_and(|v| json_equal(&v, literal)) != *negated {
                    reach_rest(member, rest, visit);
                }
            });
        }
    }
}

fn one_step(value: &dyn Walk, step: &Step, visit: &mut dyn FnMut(&dyn Walk)) {
    match step {
        Step::Key(key) => {
            if let Some(next) = value.member(key) {
                visit(next);
            }
        }
        Step::Index(index) => {
            if let Some(next) = value.element(*index) {
                visit(next);
            }
        }
        Step::All => value.each(visit),
    }
}

/// Scalars (a path that goes on selects nothing), shown as their JSON
/// shows as text.
macro_rules! walk_scalar {
    ($($ty:ty),*) => {
        $(impl Walk for $ty {
            fn to_json(&self) -> Value {
                Value::from(self.clone())
            }
            fn push_text(&self, out: &mut String) {
                // Writing to a `String` cannot fail.
                let _ = write!(out, "{self}");
            }
        })*
    };
}

walk_scalar!(bool, i32, i64, u64, usize);

impl Walk for String {
    fn to_json(&self) -> Value {
        Value::from(self.as_str())
    }
    fn push_text(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Walk for str {
    fn to_json(&self) -> Value {
        Value::from(self)
    }
    fn push_text(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl<T: Walk + ?Sized> Walk for &T {
    fn to_json(&self) -> Value {
        (**self).to_json()
    }
    fn member(&self, key: &str) -> Option<&dyn Walk> {
        (**self).member(key)
    }
    fn element(&self, index: usize) -> Option<&dyn Walk> {
        (**self).element(index)
    }
    fn each(&self, visit: &mut dyn FnMut(&dyn Walk)) {
        (**self).each(visit);
    }
    fn walks_as_json(&self) -> bool {
        (**self).walks_as_json()
    }
    fn is_null(&self) -> bool {
        (**self).is_null()
    }
    fn push_text(&self, out: &mut String) {
        (**self).push_text(out);
    }
}

/// JSON itself, for what is walked as JSON.
impl Walk for Value {
    fn to_json(&self) -> Value {
        self.clone()
    }
    fn member(&self, key: &str) -> Option<&dyn Walk> {
        self.as_object()?.get(key).map(|v| v as &dyn Walk)
    }
    fn element(&self, index: usize) -> Option<&dyn Walk> {
        self.as_array()?.get(index).map(|v| v as &dyn Walk)
    }
    fn each(&self, visit: &mut dyn FnMut(&dyn Walk)) {
        match self {
            Value::Array(items) => items.iter().for_each(|v| visit(v)),
            Value::Object(map) => map.values().for_each(|v| visit(v)),
            _ => {}
        }
    }
    fn is_null(&self) -> bool {
        self.is_null()
    }
    fn push_text(&self, out: &mut String) {
        message::push_value(out, self);
    }
}

impl<T: Walk> Walk for Option<T> {
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, Walk::to_json)
    }
    fn member(&self, key: &str) -> Option<&dyn Walk> {
        self.as_ref()?.member(key)
    }
    fn element(&self, index: usize) -> Option<&dyn Walk> {
        self.as_ref()?.element(index)
    }
    fn each(&self, visit: &mut dyn FnMut(&dyn Walk)) {
        if let Some(value) = self {
            value.each(visit);
        }
    }
    fn is_null(&self) -> bool {
        self.as_ref().is_none_or(Walk::is_null)
    }
    fn push_text(&self, out: &mut String) {
        match self {
            Some(value) => value.push_text(out),
            None => out.push_str(ABSENT),
        }
    }
}

impl<T: Walk> Walk for [T] {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(Walk::to_json).collect())
    }
    fn element(&self, index: usize) -> Option<&dyn Walk> {
        self.get(index).map(|v| v as &dyn Walk)
    }
    fn each(&self, visit: &mut dyn FnMut(&dyn Walk)) {
        self.iter().for_each(|v| visit(v));
    }
    fn push_text(&self, out: &mut String) {
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            item.push_text(out);
        }
    }
}

impl<T: Walk> Walk for Vec<T> {
    fn to_json(&self) -> Value {
        self.as_slice().to_json()
    }
    fn element(&self, index: usize) -> Option<&dyn Walk> {
        self.as_slice().element(index)
    }
    fn each(&self, visit: &mut dyn FnMut(&dyn Walk)) {
        self.as_slice().each(visit);
    }
    fn push_text(&self, out: &mut String) {
        self.as_slice().push_text(out);
    }
}

impl<V: Walk> Walk for BTreeMap<String, V> {
    fn to_json(&self) -> Value {
        Value::Object(self.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
    }
    fn member(&self, key: &str) -> Option<&dyn Walk> {
        self.get(key).map(|v| v as &dyn Walk)
    }
    fn each(&self, visit: &mut dyn FnMut(&dyn Walk)) {
        self.values().for_each(|v| visit(v));
    }
    fn push_text(&self, out: &mut String) {
        for (i, (key, value)) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(key);
            out.push('=');
            value.push_text(out);
        }
    }
}

/// [`Walk`] for a struct that derives `Serialize`: its members by JSON name,
/// listed in JSON (sorted) order. `?field` is an `Option` that is skipped
/// when `None` (`skip_serializing_if`), so it is then no member at all.
macro_rules! walk_struct {
    ($ty:ty { $($name:literal => $($field:ident)? $(?$optional:ident)?),* $(,)? }) => {
        impl $crate::policy::extract::typed::Walk for $ty {
            fn to_json(&self) -> serde_json::Value {
                // Strings, numbers, bools and string-keyed maps cannot fail.
                serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
            }
            fn member(&self, key: &str) -> Option<&dyn $crate::policy::extract::typed::Walk> {
                match key {
                    $($name => walk_struct!(@get self $($field)? $(?$optional)?),)*
                    _ => None,
                }
            }
            fn each(&self, visit: &mut dyn FnMut(&dyn $crate::policy::extract::typed::Walk)) {
                $(if let Some(v) = walk_struct!(@get self $($field)? $(?$optional)?) {
                    visit(v);
                })*
            }
        }
    };
    (@get $self:ident $field:ident) => { Some(&$self.$field) };
    (@get $self:ident ?$field:ident) => {
        $self.$field.as_ref().map(|v| v as &dyn $crate::policy::extract::typed::Walk)
    };
}

pub(crate) use walk_struct;

/// Every path to every node of `json`; each also with a missing name,
/// an index past the end and `[*]` after it, and with all its indexes
/// turned into `[*]` (for tests comparing typed and JSON walks).
#[cfg(test)]
pub fn every_path(json: &Value) -> Vec<Vec<Step>> {
    fn visit(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        out.push(at.clone());
        for extra in [Step::All, Step::Key("absent".into()), Step::Index(7)] {
            let mut path = at.clone();
            path.push(extra);
            out.push(path);
        }
        let children: Vec<(Step, &Value)> = match value {
            Value::Object(map) => map.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Step::Index(i), v))
                .collect(),
            _ => Vec::new(),
        };
        for (step, child) in children {
            at.push(step);
            visit(child, at, out);
            at.pop();
        }
    }
    let mut out = Vec::new();
    visit(json, &mut Vec::new(), &mut out);
    let wildcards: Vec<Vec<Step>> = out
        .iter()
        .filter(|path| path.iter().any(|s| matches!(s, Step::Index(_))))
        .map(|path| {
            path.iter()
                .map(|s| match s {
                    Step::Index(_) => Step::All,
                    other => other.clone(),
                })
                .collect()
        })
        .collect();
    out.extend(wildcards);
    out
}
