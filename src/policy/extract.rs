//! Reading a simple path (`facts.node.ready`, `facts.leader.leases[*].name`)
//! straight out of typed values, without building their JSON first.
//!
//! Building the whole evaluation context as a `serde_json::Value` for every
//! request, then walking it with a general JSONPath engine, was over a third
//! of a decision's time. A [`Plan`] instead drives the value's own
//! `Serialize` impl: fields off the path are skipped by name, and only what
//! the path ends at is turned into JSON. The result is exactly what the same
//! JSONPath would select from `serde_json::to_value` of the value, which the
//! tests check against jsonpath-rust itself.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use jsonpath_rust::parser::model::{
    Comparable, Comparison, Filter, FilterAtom, JpQuery, Literal, Segment, Selector, SingularQuery,
    SingularQuerySegment,
};
use serde::Serialize;
use serde_json::Value;

/// One step of a simple path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `.name` or `['name']`: an object member.
    Key(String),
    /// `[n]` (n ≥ 0): an array element.
    Index(usize),
    /// `[*]`: every array element or object member value.
    All,
}

/// Append the values at `steps` inside `value` to `out`, in JSON order
/// (object members sorted by key, as `serde_json::Map` keeps them).
pub fn select<T: Serialize + ?Sized>(value: &T, steps: &[Step], out: &mut Vec<Value>) {
    // A value whose serialization fails has no JSON, so nothing to select
    // (`serde_json::to_value` would have failed for it too).
    let _ = serializer::descend(value, steps, out);
}

/// The same over a JSON document (tests, and values built by hand).
pub fn walk<'v>(value: &'v Value, steps: &[Step], out: &mut Vec<&'v Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(value);
        return;
    };
    match (step, value) {
        (Step::Key(key), Value::Object(map)) => {
            if let Some(v) = map.get(key) {
                walk(v, rest, out);
            }
        }
        (Step::Index(i), Value::Array(items)) => {
            if let Some(v) = items.get(*i) {
                walk(v, rest, out);
            }
        }
        (Step::All, Value::Array(items)) => items.iter().for_each(|v| walk(v, rest, out)),
        (Step::All, Value::Object(map)) => map.values().for_each(|v| walk(v, rest, out)),
        _ => {}
    }
}

/// A path's text as a number: equal texts get equal keys for the life of
/// the process, so an evaluation's memo of selections compares numbers
/// instead of copying and comparing texts. Texts are kept for good; a
/// process only ever sees the paths its policies hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathKey(u32);

impl PathKey {
    pub fn of(text: &str) -> PathKey {
        static KEYS: Mutex<Option<HashMap<Box<str>, u32>>> = Mutex::new(None);
        let mut keys = KEYS.lock().unwrap_or_else(PoisonError::into_inner);
        let keys = keys.get_or_insert_with(HashMap::new);
        if let Some(key) = keys.get(text) {
            return PathKey(*key);
        }
        let key = u32::try_from(keys.len()).expect("fewer than 2^32 distinct paths");
        keys.insert(text.into(), key);
        PathKey(key)
    }
}

/// How a compiled JSONPath is run.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Names, non-negative indexes and wildcards only: walked without JSON.
    Walk(Vec<Step>),
    /// A walkable prefix of names/indexes (one node at most), then the rest
    /// (a filter, say) run on that node's JSON.
    Rooted { prefix: Vec<Step>, rest: Rest },
    /// Anything else (`$..x`, or a filter that refers to `$`): the engine
    /// on the whole document.
    Whole(JpQuery),
}

/// What a rooted plan runs on the node its prefix reaches.
#[derive(Clone, Debug)]
pub enum Rest {
    /// Steps and equality filters (`[?@.attached == true]`), the shape
    /// policies' templates use: walked here, since the engine costs ~5k
    /// instructions a run.
    Walk(Vec<RestStep>),
    /// Anything else: the JSONPath engine.
    Engine(JpQuery),
}

/// One step after a rooted plan's prefix.
#[derive(Clone, Debug, PartialEq)]
pub enum RestStep {
    Step(Step),
    /// `[?@.path == literal]` (or `!=`, or the sides swapped): the array
    /// elements (or member values) whose value at `path` equals `literal`
    /// (or does not; a missing value equals nothing).
    Equals {
        path: Vec<Step>,
        literal: Value,
        negated: bool,
    },
}

impl Plan {
    pub fn new(query: JpQuery) -> Plan {
        let steps: Vec<Option<Step>> = query.segments.iter().map(simple_step).collect();
        if let Some(steps) = steps.iter().cloned().collect::<Option<Vec<Step>>>() {
            return Plan::Walk(steps);
        }
        let prefix: Vec<Step> = steps
            .into_iter()
            .map_while(|s| s.filter(|s| *s != Step::All))
            .collect();
        let rest = &query.segments[prefix.len()..];
        // Re-rooting is only sound when nothing in the rest refers back to
        // the document root (a `$` inside a filter).
        if prefix.is_empty() || rest.iter().any(|s| s.to_string().contains('$')) {
            return Plan::Whole(query);
        }
        let rest = match rest.iter().map(rest_step).collect::<Option<Vec<_>>>() {
            Some(steps) => Rest::Walk(steps),
            None => Rest::Engine(JpQuery::new(rest.to_vec())),
        };
        Plan::Rooted { prefix, rest }
    }
}

/// One segment after the prefix: a simple step or an equality filter
/// against a literal on a relative path of names and non-negative indexes.
fn rest_step(segment: &Segment) -> Option<RestStep> {
    if let Some(step) = simple_step(segment) {
        return Some(RestStep::Step(step));
    }
    let Selector::Filter(Filter::Atom(FilterAtom::Comparison(comparison))) = single(segment)?
    else {
        return None;
    };
    let (lhs, rhs, negated) = match comparison.as_ref() {
        Comparison::Eq(lhs, rhs) => (lhs, rhs, false),
        Comparison::Ne(lhs, rhs) => (lhs, rhs, true),
        _ => return None,
    };
    let (query, literal) = match (lhs, rhs) {
        (
            Comparable::SingularQuery(SingularQuery::Current(query)),
            Comparable::Literal(literal),
        )
        | (
            Comparable::Literal(literal),
            Comparable::SingularQuery(SingularQuery::Current(query)),
        ) => (query, literal),
        _ => return None,
    };
    let path = query
        .iter()
        .map(|segment| match segment {
            SingularQuerySegment::Name(name) => Some(Step::Key(name.clone())),
            SingularQuerySegment::Index(i) => usize::try_from(*i).ok().map(Step::Index),
        })
        .collect::<Option<Vec<_>>>()?;
    let literal = match literal {
        Literal::Int(n) => Value::from(*n),
        Literal::Float(f) => Value::from(*f),
        Literal::String(s) => Value::from(s.as_str()),
        Literal::Bool(b) => Value::from(*b),
        Literal::Null => Value::Null,
    };
    Some(RestStep::Equals {
        path,
        literal,
        negated,
    })
}

/// The one selector of a segment, if it has exactly one.
fn single(segment: &Segment) -> Option<&Selector> {
    match segment {
        Segment::Selector(selector) => Some(selector),
        Segment::Selectors(selectors) if selectors.len() == 1 => Some(&selectors[0]),
        Segment::Selectors(_) | Segment::Descendant(_) => None,
    }
}

/// One segment as a step: a single name, non-negative index or wildcard.
fn simple_step(segment: &Segment) -> Option<Step> {
    match single(segment)? {
        Selector::Name(name) => Some(Step::Key(name.clone())),
        Selector::Index(i) => usize::try_from(*i).ok().map(Step::Index),
        Selector::Wildcard => Some(Step::All),
        Selector::Slice(..) | Selector::Filter(_) => None,
    }
}

/// The values `plan` selects in `value`; `whole` gives `value`'s JSON, asked
/// for only by [`Plan::Whole`].
pub fn run<'w, T: Serialize + ?Sized>(
    plan: &Plan,
    value: &T,
    whole: impl FnOnce() -> &'w Value,
) -> Vec<Value> {
    run_with(plan, |steps, out| select(value, steps, out), whole)
}

/// [`run`] with the walk supplied: `select(steps, out)` appends what `steps`
/// select from the root (so a caller can go straight to the member a first
/// step names).
pub fn run_with<'w>(
    plan: &Plan,
    select: impl Fn(&[Step], &mut Vec<Value>),
    whole: impl FnOnce() -> &'w Value,
) -> Vec<Value> {
    match plan {
        Plan::Walk(steps) => {
            let mut out = Vec::new();
            select(steps, &mut out);
            out
        }
        Plan::Rooted { prefix, rest } => {
            let mut nodes = Vec::new();
            select(prefix, &mut nodes);
            match rest {
                Rest::Walk(steps) => {
                    let mut found = Vec::new();
                    nodes
                        .iter()
                        .for_each(|node| walk_rest(node, steps, &mut found));
                    found.into_iter().cloned().collect()
                }
                Rest::Engine(rest) => nodes.iter().flat_map(|node| query(rest, node)).collect(),
            }
        }
        Plan::Whole(q) => query(q, whole()),
    }
}

/// [`walk`] for steps that may filter.
fn walk_rest<'v>(value: &'v Value, steps: &[RestStep], out: &mut Vec<&'v Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(value);
        return;
    };
    let mut next = Vec::new();
    match step {
        RestStep::Step(step) => walk(value, std::slice::from_ref(step), &mut next),
        RestStep::Equals {
            path,
            literal,
            negated,
        } => {
            // A filter tests what `[*]` would select.
            let mut members = Vec::new();
            walk(value, &[Step::All], &mut members);
            next.extend(members.into_iter().filter(|member| {
                let mut at = Vec::new();
                walk(member, path, &mut at);
                at.first().is_some_and(|v| json_equal(v, literal)) != *negated
            }));
        }
    }
    next.into_iter().for_each(|v| walk_rest(v, rest, out));
}

/// Equality as the JSONPath engine has it: numbers by value (`1 == 1.0`),
/// everything else as JSON.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() < f64::EPSILON,
        _ => a == b,
    }
}

fn query(query: &JpQuery, value: &Value) -> Vec<Value> {
    jsonpath_rust::query::js_path_process(query, value)
        .map(|refs| refs.into_iter().map(|r| r.val.clone()).collect())
        .unwrap_or_default()
}

mod serializer;
pub mod typed;

#[cfg(test)]
mod tests;
