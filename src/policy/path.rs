//! Compiled JSONPaths: which member of the evaluation context a path starts
//! at, and how it runs there.
//!
//! Paths are parsed (RFC 9535, jsonpath-rust) and checked when policies
//! load. Most are a context root followed by names, indexes and `[*]`
//! (`$.facts.node.ready`): those walk the root's JSON directly. Anything
//! else (filters, slices, `..`) runs in jsonpath-rust on the root's JSON,
//! or on the whole document when it needs it (`$..uid`, `$[*]`, a filter
//! that refers to `$`).

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use serde_json::Value;
use smallvec::SmallVec;

/// What a path selects: mostly one value, so up to four are kept inline.
pub type Selected<'v> = SmallVec<[&'v Value; 4]>;

/// A member of the evaluation context a path may start at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    Request,
    Object,
    OldObject,
    Facts,
    Intent,
    Target,
    Requester,
    Record,
    Settings,
    Now,
}

impl Root {
    /// Every root, in the order error messages list them.
    pub const ALL: [Root; 10] = [
        Root::Request,
        Root::Object,
        Root::OldObject,
        Root::Facts,
        Root::Intent,
        Root::Target,
        Root::Requester,
        Root::Record,
        Root::Settings,
        Root::Now,
    ];

    /// Its member name in the document.
    pub fn name(self) -> &'static str {
        match self {
            Root::Request => "request",
            Root::Object => "object",
            Root::OldObject => "oldObject",
            Root::Facts => "facts",
            Root::Intent => "intent",
            Root::Target => "target",
            Root::Requester => "requester",
            Root::Record => "record",
            Root::Settings => "settings",
            Root::Now => "now",
        }
    }

    pub fn named(name: &str) -> Option<Root> {
        Root::ALL.into_iter().find(|root| root.name() == name)
    }

    /// "request, object, ..." for error messages.
    pub fn list() -> String {
        Root::ALL.map(Root::name).join(", ")
    }
}

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

/// How a compiled path runs.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Names, non-negative indexes and wildcards from a root.
    Walk { root: Root, steps: Vec<Step> },
    /// Anything else from a root, run by jsonpath-rust on the root's JSON.
    Query { root: Root, rest: JpQuery },
    /// A path that needs the whole document.
    Whole(JpQuery),
}

impl Plan {
    pub fn new(query: JpQuery) -> Plan {
        let root = query
            .segments
            .first()
            .and_then(|segment| match single(segment)? {
                Selector::Name(name) => Root::named(name),
                _ => None,
            });
        let Some(root) = root else {
            return Plan::Whole(query);
        };
        let rest = &query.segments[1..];
        if let Some(steps) = rest.iter().map(simple_step).collect::<Option<Vec<_>>>() {
            return Plan::Walk { root, steps };
        }
        // Run from the root only when nothing in the rest refers back to
        // the document (a `$` inside a filter).
        if rest.iter().any(|segment| segment.to_string().contains('$')) {
            return Plan::Whole(query);
        }
        Plan::Query {
            root,
            rest: JpQuery::new(rest.to_vec()),
        }
    }

    /// The path of member names `keys` (`["facts", "node", "ready"]`).
    pub fn names(keys: &[&str]) -> Plan {
        let segments = keys
            .iter()
            .map(|key| Segment::Selector(Selector::Name((*key).to_owned())))
            .collect();
        Plan::new(JpQuery::new(segments))
    }

    /// Append what the plan selects to `out`, in document order: `root`
    /// gives a root's JSON (`None` when the document lacks it), `whole` the
    /// whole document, asked for only by [`Plan::Whole`].
    pub fn select<'v>(
        &self,
        root: impl FnOnce(Root) -> Option<&'v Value>,
        whole: impl FnOnce() -> &'v Value,
        out: &mut Selected<'v>,
    ) {
        match self {
            Plan::Walk { root: at, steps } => {
                if let Some(value) = root(*at) {
                    walk(value, steps, out);
                }
            }
            Plan::Query { root: at, rest } => {
                if let Some(value) = root(*at) {
                    query(rest, value, out);
                }
            }
            Plan::Whole(whole_query) => query(whole_query, whole(), out),
        }
    }
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

/// Append the values at `steps` inside `value`, in JSON order (object
/// members sorted by key, as `serde_json::Map` keeps them).
fn walk<'v>(value: &'v Value, steps: &[Step], out: &mut Selected<'v>) {
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

fn query<'v>(query: &JpQuery, value: &'v Value, out: &mut Selected<'v>) {
    // A query whose result is a value rather than nodes selects nothing.
    if let Ok(found) = jsonpath_rust::query::js_path_process(query, value) {
        out.extend(found.into_iter().map(|r| r.val));
    }
}

#[cfg(test)]
mod tests;
