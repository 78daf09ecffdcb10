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

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
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

/// How a compiled JSONPath is run.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Names, non-negative indexes and wildcards only: walked without JSON.
    Walk(Vec<Step>),
    /// A walkable prefix of names/indexes (one node at most), then the rest
    /// (a filter, say) run by the JSONPath engine on that node's JSON.
    Rooted { prefix: Vec<Step>, rest: JpQuery },
    /// Anything else (`$..x`, or a filter that refers to `$`): the engine
    /// on the whole document.
    Whole(JpQuery),
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
        let rest = JpQuery::new(rest.to_vec());
        Plan::Rooted { prefix, rest }
    }
}

/// One segment as a step: a single name, non-negative index or wildcard.
fn simple_step(segment: &Segment) -> Option<Step> {
    let selector = match segment {
        Segment::Selector(selector) => selector,
        Segment::Selectors(selectors) if selectors.len() == 1 => &selectors[0],
        Segment::Selectors(_) | Segment::Descendant(_) => return None,
    };
    match selector {
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
            nodes.iter().flat_map(|node| query(rest, node)).collect()
        }
        Plan::Whole(q) => query(q, whole()),
    }
}

fn query(query: &JpQuery, value: &Value) -> Vec<Value> {
    jsonpath_rust::query::js_path_process(query, value)
        .map(|refs| refs.into_iter().map(|r| r.val.clone()).collect())
        .unwrap_or_default()
}

mod serializer;

#[cfg(test)]
mod tests;
