//! Conditions: selections (built-in facts or JSONPath) tested by operators,
//! combined with `all`, `any`, `not`, under three-valued logic.
//!
//! A selection over a fact group the cluster view could not answer is
//! *unknown*, not false: `all` is false as soon as one part is false, `any`
//! is true as soon as one part is true, and only what stays unknown reaches
//! the policy's `onUnknown`. So an unknown Lease never blocks the deletion of
//! a pod that is not in a StatefulSet at all.

use std::collections::BTreeMap;

use jsonpath_rust::parser::model::JpQuery;
use serde_json::Value;

use super::catalog::{self, FactSpec};

mod compile;
mod operator;
#[cfg(test)]
mod tests;

pub(crate) use compile::{compile, compile_path};
use operator::Operator;
pub use operator::json_eq;

/// Context roots a JSONPath may start from.
pub const CONTEXT_ROOTS: &[&str] = &[
    "request",
    "object",
    "oldObject",
    "facts",
    "intent",
    "target",
    "requester",
    "record",
    "settings",
    "now",
];

/// Three-valued truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Unknown,
}

/// Something a condition needed but could not read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Missing {
    /// e.g. `facts.node.ready`.
    pub what: String,
    /// e.g. `Node: not in the snapshot`.
    pub why: String,
}

impl Missing {
    /// "facts.node.ready, facts.node.fenced (Node: not in the snapshot); ..."
    /// grouped by reason, in first-seen order.
    pub fn describe(missing: &[Missing]) -> String {
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for m in missing {
            match groups.iter_mut().find(|(why, _)| *why == m.why) {
                Some((_, whats)) => {
                    if !whats.contains(&m.what.as_str()) {
                        whats.push(&m.what);
                    }
                }
                None => groups.push((&m.why, vec![&m.what])),
            }
        }
        groups
            .iter()
            .map(|(why, whats)| format!("{} ({why})", whats.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A condition's result and why: what made it true, or what was missing.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub truth: Truth,
    /// For `True`: the facts that made it hold, e.g. `facts.node.ready is true`.
    pub because: Vec<String>,
    /// For `Unknown`: what could not be known and why.
    pub missing: Vec<Missing>,
}

impl Verdict {
    pub fn yes(because: Vec<String>) -> Self {
        Self {
            truth: Truth::True,
            because,
            missing: Vec::new(),
        }
    }

    pub fn no() -> Self {
        Self {
            truth: Truth::False,
            because: Vec::new(),
            missing: Vec::new(),
        }
    }

    pub fn unknown(missing: Vec<Missing>) -> Self {
        Self {
            truth: Truth::Unknown,
            because: Vec::new(),
            missing,
        }
    }

    /// Kleene conjunction, keeping the reasons.
    pub fn and(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut because = Vec::new();
        let mut missing = Vec::new();
        for verdict in verdicts {
            match verdict.truth {
                Truth::False => return Verdict::no(),
                Truth::True => because.extend(verdict.because),
                Truth::Unknown => missing.extend(verdict.missing),
            }
        }
        if missing.is_empty() {
            Verdict::yes(because)
        } else {
            dedup(&mut missing);
            Verdict::unknown(missing)
        }
    }

    /// Kleene disjunction: the first true part explains it.
    pub fn or(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut missing = Vec::new();
        for verdict in verdicts {
            match verdict.truth {
                Truth::True => return verdict,
                Truth::False => {}
                Truth::Unknown => missing.extend(verdict.missing),
            }
        }
        if missing.is_empty() {
            Verdict::no()
        } else {
            dedup(&mut missing);
            Verdict::unknown(missing)
        }
    }
}

fn dedup<T: Clone + Ord>(items: &mut Vec<T>) {
    let mut seen = std::collections::BTreeSet::new();
    items.retain(|item| seen.insert(item.clone()));
}

/// What one evaluation reads: the context document and the unknown groups.
pub struct Scope<'a> {
    pub context: &'a Value,
    /// Normalized group name → why it is unknown.
    pub unknown: &'a BTreeMap<String, String>,
}

/// A compiled condition.
#[derive(Clone, Debug)]
pub struct Condition {
    kind: Kind,
    /// Author-supplied text used instead of the generated explanation.
    description: Option<String>,
}

#[derive(Clone, Debug)]
enum Kind {
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
    Test {
        selection: Selection,
        operator: Operator,
    },
}

/// Where a condition's values come from.
#[derive(Clone, Debug)]
pub enum Selection {
    Fact(&'static FactSpec),
    Path {
        text: String,
        query: JpQuery,
        /// `$.facts.<group>...`: the fact group it reads, if any.
        group: Option<String>,
        /// The context key it starts at; `None` for `$..x`, `$[*]` and the like.
        root: Option<String>,
    },
}

impl Condition {
    /// Evaluate under three-valued logic.
    pub fn eval(&self, scope: &Scope<'_>) -> Verdict {
        let verdict = match &self.kind {
            Kind::All(parts) => Verdict::and(parts.iter().map(|c| c.eval(scope))),
            Kind::Any(parts) => Verdict::or(parts.iter().map(|c| c.eval(scope))),
            Kind::Not(inner) => {
                let verdict = inner.eval(scope);
                match verdict.truth {
                    Truth::True => Verdict::no(),
                    Truth::False => Verdict::yes(vec![format!("not ({})", inner.describe())]),
                    Truth::Unknown => verdict,
                }
            }
            Kind::Test {
                selection,
                operator,
            } => test(selection, operator, scope),
        };
        match (&self.description, verdict.truth) {
            (Some(text), Truth::True) => Verdict::yes(vec![text.clone()]),
            _ => verdict,
        }
    }

    /// Static text for the condition, e.g. `facts.node.ready equals true`.
    pub fn describe(&self) -> String {
        if let Some(text) = &self.description {
            return text.clone();
        }
        match &self.kind {
            Kind::All(parts) => join_described(parts, " and "),
            Kind::Any(parts) => join_described(parts, " or "),
            Kind::Not(inner) => format!("not ({})", inner.describe()),
            Kind::Test {
                selection,
                operator,
            } => format!("{} {}", selection.display(), operator.describe()),
        }
    }

    /// Whether evaluating it may read `request`, `object` or `oldObject`
    /// (the expensive part of the context to build).
    pub fn reads_request(&self) -> bool {
        self.selections().iter().any(|s| s.reads_request())
    }

    /// Every selection in the condition.
    pub fn selections(&self) -> Vec<&Selection> {
        match &self.kind {
            Kind::All(parts) | Kind::Any(parts) => {
                parts.iter().flat_map(Condition::selections).collect()
            }
            Kind::Not(inner) => inner.selections(),
            Kind::Test { selection, .. } => vec![selection],
        }
    }
}

fn join_described(parts: &[Condition], separator: &str) -> String {
    let texts: Vec<String> = parts.iter().map(Condition::describe).collect();
    format!("({})", texts.join(separator))
}

impl Selection {
    /// Whether it may read `request`, `object` or `oldObject`.
    pub fn reads_request(&self) -> bool {
        match self {
            Selection::Fact(_) => false,
            Selection::Path { root, .. } => root
                .as_deref()
                .is_none_or(|r| matches!(r, "request" | "object" | "oldObject")),
        }
    }

    /// How the selection is shown in explanations.
    pub fn display(&self) -> String {
        match self {
            Selection::Fact(spec) => spec.context_path().join("."),
            Selection::Path { text, .. } => text.clone(),
        }
    }

    fn group(&self) -> Option<&str> {
        match self {
            Selection::Fact(spec) => spec.group(),
            Selection::Path { group, .. } => group.as_deref(),
        }
    }

    /// The selected values (nulls dropped), or why they cannot be known.
    pub fn values<'v>(&self, scope: &Scope<'v>) -> Result<Vec<&'v Value>, Missing> {
        if let Some(group) = self.group()
            && let Some(reason) = scope.unknown.get(&catalog::normalize_group(group))
        {
            return Err(Missing {
                what: self.display(),
                why: reason.clone(),
            });
        }
        let values: Vec<&Value> = match self {
            Selection::Fact(spec) => {
                let mut node = Some(scope.context);
                for segment in spec.context_path() {
                    node = node.and_then(|n| n.get(segment));
                }
                node.into_iter().collect()
            }
            Selection::Path { query, .. } => {
                jsonpath_rust::query::js_path_process(query, scope.context)
                    .map(|refs| refs.into_iter().map(|r| r.val).collect())
                    .unwrap_or_default()
            }
        };
        Ok(values.into_iter().filter(|v| !v.is_null()).collect())
    }
}

fn test(selection: &Selection, operator: &Operator, scope: &Scope<'_>) -> Verdict {
    let values = match selection.values(scope) {
        Ok(values) => values,
        Err(missing) => return Verdict::unknown(vec![missing]),
    };
    let shown = selection.display();
    match operator.apply(&values) {
        Some(witness) => Verdict::yes(vec![format!("{shown} {witness}")]),
        None => Verdict::no(),
    }
}
