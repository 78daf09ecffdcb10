//! Conditions: selections (built-in facts or JSONPath) tested by operators,
//! combined with `all`, `any`, `not`, under three-valued logic.
//!
//! A selection over a fact group the cluster view could not answer is
//! *unknown*, not false: `all` is false as soon as one part is false, `any`
//! is true as soon as one part is true, and only what stays unknown reaches
//! the policy's `onUnknown`. So an unknown Lease never blocks the deletion of
//! a pod that is not in a StatefulSet at all.

use std::collections::BTreeMap;

use super::catalog::{self, FactSpec};
use super::context::Context;
use super::path::{Plan, Selected};

mod compile;
mod operator;
#[cfg(test)]
mod tests;
mod verdict;

pub(crate) use compile::{compile, compile_path};
use operator::Operator;
pub use operator::json_eq;
pub use verdict::{Missing, Truth, Verdict};
use verdict::{push_part, start_part};

/// What one evaluation reads: the context document and the unknown groups.
pub struct Scope<'a> {
    pub context: &'a Context<'a>,
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
    Fact {
        spec: &'static FactSpec,
        /// `facts.node.ready`: the path in the context, and how it is shown.
        plan: Plan,
        shown: String,
    },
    Path {
        text: String,
        plan: Plan,
        /// `$.facts.<group>...`: the fact group it reads, if any.
        group: Option<String>,
        /// Reads the document or the facts as a whole (`$..x`, `$.facts[*]`),
        /// so any fact group.
        any_fact: bool,
    },
}

impl Condition {
    /// Evaluate under three-valued logic.
    pub fn eval(&self, scope: &Scope<'_>) -> Verdict {
        Condition::eval_all(std::slice::from_ref(self), scope)
    }

    /// Evaluate `conditions` as one `all`, their explanations written into
    /// one buffer rather than a `String` per test joined at the end.
    pub fn eval_all(conditions: &[Condition], scope: &Scope<'_>) -> Verdict {
        // Room for a few `facts.x.y is "z"` parts without regrowing.
        let mut because = String::with_capacity(256);
        let mut missing = Vec::new();
        let truth = Condition::explain_all(conditions, scope, &mut because, &mut missing);
        Verdict::explained(truth, because, missing)
    }

    /// [`eval_all`](Self::eval_all) into buffers the caller keeps: what made
    /// it true is appended to `because`, what could not be read to
    /// `missing`; on false, what they hold is meaningless.
    ///
    /// Rules are evaluated this way once, with their explanation: a first
    /// pass for the truth alone costs more than it saves, since among the
    /// rules whose policy applies most fire, and a rule that does not stops
    /// at its first false test.
    pub fn explain_all(
        conditions: &[Condition],
        scope: &Scope<'_>,
        because: &mut String,
        missing: &mut Vec<Missing>,
    ) -> Truth {
        Truth::all(
            conditions
                .iter()
                .map(|c| c.explain(scope, because, missing)),
        )
    }

    /// The truth, appending what made it true to `because` (parts joined
    /// by " and ") and what could not be read to `missing`. Each buffer is
    /// left as found unless the outcome uses it: `because` only when true,
    /// `missing` only when unknown.
    fn explain(
        &self,
        scope: &Scope<'_>,
        because: &mut String,
        missing: &mut Vec<Missing>,
    ) -> Truth {
        let (mark, missing_mark) = (because.len(), missing.len());
        let truth = match &self.kind {
            Kind::All(parts) => {
                Truth::all(parts.iter().map(|c| c.explain(scope, because, missing)))
            }
            Kind::Any(parts) => {
                !Truth::all(parts.iter().map(|c| !c.explain(scope, because, missing)))
            }
            Kind::Not(inner) => {
                let truth = !inner.explain(scope, because, missing);
                if truth == Truth::True {
                    start_part(because);
                    because.push_str("not (");
                    because.push_str(&inner.describe());
                    because.push(')');
                }
                truth
            }
            Kind::Test {
                selection,
                operator,
            } => {
                let lead = |because: &mut String| {
                    start_part(because);
                    because.push_str(selection.display());
                    because.push(' ');
                };
                match selection.values(scope) {
                    Err(why) => {
                        missing.push(why);
                        Truth::Unknown
                    }
                    Ok(values) if operator.explain(&values, because, lead) => Truth::True,
                    Ok(_) => Truth::False,
                }
            }
        };
        if truth != Truth::True {
            because.truncate(mark);
        }
        if truth != Truth::Unknown {
            missing.truncate(missing_mark);
        }
        if let (Some(text), Truth::True) = (&self.description, truth) {
            because.truncate(mark);
            push_part(because, text);
        }
        truth
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
    pub fn fact(spec: &'static FactSpec) -> Self {
        let path = spec.context_path();
        Selection::Fact {
            spec,
            plan: Plan::names(&path),
            shown: path.join("."),
        }
    }

    /// How the selection is shown in explanations.
    pub fn display(&self) -> &str {
        match self {
            Selection::Fact { shown, .. } => shown,
            Selection::Path { text, .. } => text,
        }
    }

    /// How the selection runs.
    pub fn plan(&self) -> &Plan {
        let (Selection::Fact { plan, .. } | Selection::Path { plan, .. }) = self;
        plan
    }

    /// Whether evaluating this may read fact group `group`.
    pub fn may_read(&self, group: &str) -> bool {
        match self {
            Selection::Path { any_fact: true, .. } => true,
            _ => self.group() == Some(group),
        }
    }

    fn group(&self) -> Option<&str> {
        match self {
            Selection::Fact { spec, .. } => spec.group(),
            Selection::Path { group, .. } => group.as_deref(),
        }
    }

    /// The selected values (nulls dropped), or why they cannot be known.
    pub fn values<'s>(&self, scope: &Scope<'s>) -> Result<Selected<'s>, Missing> {
        self.known(scope)?;
        let mut values = scope.context.select(self.plan());
        values.retain(|value| !value.is_null());
        Ok(values)
    }

    /// Why the fact group this reads cannot be known, if it cannot.
    fn known(&self, scope: &Scope<'_>) -> Result<(), Missing> {
        if !scope.unknown.is_empty()
            && let Some(group) = self.group()
            && let Some(reason) = scope.unknown.get(&catalog::normalize_group(group))
        {
            return Err(Missing {
                what: self.display().to_owned(),
                why: reason.clone(),
            });
        }
        Ok(())
    }
}
