//! Conditions: selections (built-in facts or JSONPath) tested by operators,
//! combined with `all`, `any`, `not`, under three-valued logic.
//!
//! A selection over a fact group the cluster view could not answer is
//! *unknown*, not false: `all` is false as soon as one part is false, `any`
//! is true as soon as one part is true, and only what stays unknown reaches
//! the policy's `onUnknown`. So an unknown Lease never blocks the deletion of
//! a pod that is not in a StatefulSet at all.

use std::collections::BTreeMap;

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use regex::Regex;
use serde_json::Value;

use super::catalog::{self, FactSpec, FactType};
use super::error::{Problems, one_line};
use super::model::{self, Located};

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
    },
}

#[derive(Clone, Debug)]
enum Operator {
    Equals(Value),
    NotEquals(Value),
    In(Vec<Value>),
    NotIn(Vec<Value>),
    Exists(bool),
    Matches(Regex),
    NotMatches(Regex),
    GreaterThan(f64),
    GreaterThanOrEqual(f64),
    LessThan(f64),
    LessThanOrEqual(f64),
    Contains(Value),
    ContainsAny(Vec<Value>),
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

    /// Every selection in the condition (for unknown-group reporting).
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

impl Operator {
    /// Apply to the selected values. Positive operators hold when some value
    /// satisfies them; negative ones when values exist and none matches.
    /// Returns how the values satisfied it (`is true`, `is absent`).
    fn apply(&self, values: &[&Value]) -> Option<String> {
        let some = |pred: &dyn Fn(&Value) -> bool| values.iter().find(|v| pred(v)).map(|v| is(v));
        let none = |pred: &dyn Fn(&Value) -> bool| {
            if values.is_empty() || values.iter().any(|v| pred(v)) {
                None
            } else {
                Some(values.iter().map(|v| is(v)).collect::<Vec<_>>().join(", "))
            }
        };
        match self {
            Operator::Equals(want) => some(&|v| json_eq(v, want)),
            Operator::NotEquals(want) => none(&|v| json_eq(v, want)),
            Operator::In(set) => some(&|v| set.iter().any(|w| json_eq(v, w))),
            Operator::NotIn(set) => none(&|v| set.iter().any(|w| json_eq(v, w))),
            Operator::Exists(true) => values.first().map(|v| is(v)),
            Operator::Exists(false) => values.is_empty().then(|| "is absent".to_string()),
            Operator::Matches(re) => some(&|v| regex_matches(re, v)),
            Operator::NotMatches(re) => none(&|v| regex_matches(re, v)),
            Operator::GreaterThan(n) => some(&|v| number(v).is_some_and(|x| x > *n)),
            Operator::GreaterThanOrEqual(n) => some(&|v| number(v).is_some_and(|x| x >= *n)),
            Operator::LessThan(n) => some(&|v| number(v).is_some_and(|x| x < *n)),
            Operator::LessThanOrEqual(n) => some(&|v| number(v).is_some_and(|x| x <= *n)),
            Operator::Contains(want) => some(&|v| contains(v, want)),
            Operator::ContainsAny(wants) => some(&|v| wants.iter().any(|w| contains(v, w))),
        }
    }

    fn describe(&self) -> String {
        let list = |values: &[Value]| {
            let items: Vec<String> = values.iter().map(compact).collect();
            format!("[{}]", items.join(", "))
        };
        match self {
            Operator::Equals(v) => format!("equals {}", compact(v)),
            Operator::NotEquals(v) => format!("not equals {}", compact(v)),
            Operator::In(vs) => format!("in {}", list(vs)),
            Operator::NotIn(vs) => format!("not in {}", list(vs)),
            Operator::Exists(true) => "exists".into(),
            Operator::Exists(false) => "is absent".into(),
            Operator::Matches(re) => format!("matches /{re}/"),
            Operator::NotMatches(re) => format!("does not match /{re}/"),
            Operator::GreaterThan(n) => format!("> {n}"),
            Operator::GreaterThanOrEqual(n) => format!(">= {n}"),
            Operator::LessThan(n) => format!("< {n}"),
            Operator::LessThanOrEqual(n) => format!("<= {n}"),
            Operator::Contains(v) => format!("contains {}", compact(v)),
            Operator::ContainsAny(vs) => format!("contains any of {}", list(vs)),
        }
    }
}

fn is(value: &Value) -> String {
    format!("is {}", compact(value))
}

/// Short JSON for explanations; long values are summarized.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        text
    } else {
        match value {
            Value::Array(items) => format!("a list of {}", items.len()),
            Value::Object(map) => format!("an object with {} keys", map.len()),
            _ => format!("{}…", text.chars().take(77).collect::<String>()),
        }
    }
}

/// JSON equality where 1 and 1.0 are the same number.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| json_eq(x, y)))
        }
        _ => a == b,
    }
}

fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

fn regex_matches(re: &Regex, value: &Value) -> bool {
    match value {
        Value::String(s) => re.is_match(s),
        Value::Array(items) => items
            .iter()
            .any(|item| item.as_str().is_some_and(|s| re.is_match(s))),
        _ => false,
    }
}

fn contains(haystack: &Value, needle: &Value) -> bool {
    match (haystack, needle) {
        (Value::Array(items), _) => items.iter().any(|item| json_eq(item, needle)),
        (Value::String(s), Value::String(part)) => s.contains(part.as_str()),
        (Value::Object(map), Value::String(key)) => map.contains_key(key),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Compilation: model → runtime, with every problem located.

/// Compile a condition; problems go to `problems`, `None` when it is unusable.
pub(crate) fn compile(
    located: &Located<model::Condition>,
    problems: &mut Problems,
) -> Option<Condition> {
    let (line, column) = (located.line, located.column);
    let c = &located.value;
    let selectors = [
        c.fact.is_some(),
        c.path.is_some(),
        c.all.is_some(),
        c.any.is_some(),
        c.not.is_some(),
    ];
    let operators = operator_names(c);
    if selectors.iter().filter(|s| **s).count() != 1 {
        problems.at(
            line,
            column,
            "a condition needs exactly one of `fact`, `path`, `all`, `any`, `not`",
        );
        return None;
    }
    let description = c.description.clone();
    let combine = |parts: &[Located<model::Condition>], name: &str, problems: &mut Problems| {
        if !operators.is_empty() {
            problems.at(
                line,
                column,
                format!("`{name}` cannot be combined with `{}`", operators[0]),
            );
        }
        if parts.is_empty() {
            problems.at(
                line,
                column,
                format!("`{name}` needs at least one condition"),
            );
        }
        let compiled: Vec<Option<Condition>> = parts.iter().map(|p| compile(p, problems)).collect();
        compiled.into_iter().collect::<Option<Vec<_>>>()
    };
    if let Some(parts) = &c.all {
        let parts = combine(parts, "all", problems)?;
        return Some(Condition {
            kind: Kind::All(parts),
            description,
        });
    }
    if let Some(parts) = &c.any {
        let parts = combine(parts, "any", problems)?;
        return Some(Condition {
            kind: Kind::Any(parts),
            description,
        });
    }
    if let Some(inner) = &c.not {
        let inner = combine(std::slice::from_ref(inner.as_ref()), "not", problems)?;
        return Some(Condition {
            kind: Kind::Not(Box::new(inner.into_iter().next()?)),
            description,
        });
    }
    let selection = compile_selection(c, problems)?;
    if operators.len() != 1 {
        let found = if operators.is_empty() {
            "none".to_string()
        } else {
            operators.join(", ")
        };
        problems.at(
            line,
            column,
            format!(
                "`{}` needs exactly one operator (equals, notEquals, in, notIn, exists, matches, notMatches, greaterThan, greaterThanOrEqual, lessThan, lessThanOrEqual, contains, containsAny); found {found}",
                if c.fact.is_some() { "fact" } else { "path" }
            ),
        );
        return None;
    }
    let operator = compile_operator(c, problems, line, column)?;
    if let Selection::Fact(spec) = &selection
        && let Err(reason) = check_types(spec, &operator)
    {
        problems.at(line, column, reason);
        return None;
    }
    Some(Condition {
        kind: Kind::Test {
            selection,
            operator,
        },
        description,
    })
}

fn operator_names(c: &model::Condition) -> Vec<&'static str> {
    let present = [
        (c.equals.is_some(), "equals"),
        (c.not_equals.is_some(), "notEquals"),
        (c.is_in.is_some(), "in"),
        (c.not_in.is_some(), "notIn"),
        (c.exists.is_some(), "exists"),
        (c.matches.is_some(), "matches"),
        (c.not_matches.is_some(), "notMatches"),
        (c.greater_than.is_some(), "greaterThan"),
        (c.greater_than_or_equal.is_some(), "greaterThanOrEqual"),
        (c.less_than.is_some(), "lessThan"),
        (c.less_than_or_equal.is_some(), "lessThanOrEqual"),
        (c.contains.is_some(), "contains"),
        (c.contains_any.is_some(), "containsAny"),
    ];
    present
        .into_iter()
        .filter_map(|(p, name)| p.then_some(name))
        .collect()
}

fn compile_selection(c: &model::Condition, problems: &mut Problems) -> Option<Selection> {
    if let Some(fact) = &c.fact {
        return match catalog::lookup(&fact.value) {
            Some(spec) => Some(Selection::Fact(spec)),
            None => {
                let hint = catalog::suggest(&fact.value)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                problems.at(
                    fact.line,
                    fact.column,
                    format!(
                        "unknown fact `{}`{hint}; see docs/policies.md for the list",
                        fact.value
                    ),
                );
                None
            }
        };
    }
    let path = c.path.as_ref()?;
    match compile_path(&path.value) {
        Ok(selection) => Some(selection),
        Err(reason) => {
            problems.at(path.line, path.column, reason);
            None
        }
    }
}

/// Parse a JSONPath and check it reads from a known part of the context.
pub(crate) fn compile_path(text: &str) -> Result<Selection, String> {
    let query = jsonpath_rust::parser::parse_json_path(text)
        .map_err(|e| format!("invalid JSONPath `{text}`: {}", jsonpath_reason(&e.to_string())))?;
    let names: Vec<Option<&str>> = query.segments.iter().take(2).map(segment_name).collect();
    let root = names.first().copied().flatten();
    if let Some(root) = root
        && !CONTEXT_ROOTS.contains(&root)
    {
        return Err(format!(
            "JSONPath `{text}` starts at `{root}`, which is not in the evaluation context (one of: {})",
            CONTEXT_ROOTS.join(", ")
        ));
    }
    let group = match (root, names.get(1).copied().flatten()) {
        (Some("facts"), Some(group)) => {
            if !catalog::GROUPS.contains(&group) {
                return Err(format!(
                    "JSONPath `{text}` reads unknown fact group `{group}` (one of: {})",
                    catalog::GROUPS.join(", ")
                ));
            }
            Some(group.to_string())
        }
        _ => None,
    };
    Ok(Selection::Path {
        text: text.to_string(),
        query,
        group,
    })
}

fn segment_name(segment: &Segment) -> Option<&str> {
    match segment {
        Segment::Selector(Selector::Name(name)) => Some(name),
        Segment::Selectors(selectors) => match selectors.as_slice() {
            [Selector::Name(name)] => Some(name),
            _ => None,
        },
        _ => None,
    }
}

/// Pest's multi-line report reduced to "expected ... at column N".
fn jsonpath_reason(report: &str) -> String {
    let position = report
        .lines()
        .find_map(|l| l.split_once("--> ").map(|(_, pos)| pos.trim()))
        .and_then(|pos| pos.split(':').nth(1))
        .map(|col| format!(" at column {col}"));
    let reason = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("= "))
        .map(str::to_string);
    match (reason, position) {
        (Some(reason), Some(position)) => format!("{reason}{position}"),
        _ => one_line(report),
    }
}

fn compile_operator(
    c: &model::Condition,
    problems: &mut Problems,
    line: u32,
    column: u32,
) -> Option<Operator> {
    let regex = |pattern: &Located<String>, problems: &mut Problems| match regex::RegexBuilder::new(
        &pattern.value,
    )
    .size_limit(1 << 20)
    .build()
    {
        Ok(re) => Some(re),
        Err(err) => {
            let text = err.to_string();
            let reason = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .map(str::to_string)
                .unwrap_or_else(|| one_line(&text));
            problems.at(
                pattern.line,
                pattern.column,
                format!("invalid regular expression `{}`: {reason}", pattern.value),
            );
            None
        }
    };
    let nonempty = |values: &Vec<Value>, name: &str, problems: &mut Problems| {
        if values.is_empty() {
            problems.at(line, column, format!("`{name}` needs at least one value"));
            None
        } else {
            Some(values.clone())
        }
    };
    let operator = if let Some(v) = &c.equals {
        Operator::Equals(v.clone())
    } else if let Some(v) = &c.not_equals {
        Operator::NotEquals(v.clone())
    } else if let Some(vs) = &c.is_in {
        Operator::In(nonempty(vs, "in", problems)?)
    } else if let Some(vs) = &c.not_in {
        Operator::NotIn(nonempty(vs, "notIn", problems)?)
    } else if let Some(b) = c.exists {
        Operator::Exists(b)
    } else if let Some(p) = &c.matches {
        Operator::Matches(regex(p, problems)?)
    } else if let Some(p) = &c.not_matches {
        Operator::NotMatches(regex(p, problems)?)
    } else if let Some(n) = c.greater_than {
        Operator::GreaterThan(n)
    } else if let Some(n) = c.greater_than_or_equal {
        Operator::GreaterThanOrEqual(n)
    } else if let Some(n) = c.less_than {
        Operator::LessThan(n)
    } else if let Some(n) = c.less_than_or_equal {
        Operator::LessThanOrEqual(n)
    } else if let Some(v) = &c.contains {
        Operator::Contains(v.clone())
    } else if let Some(vs) = &c.contains_any {
        Operator::ContainsAny(nonempty(vs, "containsAny", problems)?)
    } else {
        return None;
    };
    Some(operator)
}

/// Reject operators that can never hold for the fact's type, e.g. comparing
/// a boolean with the string "true".
fn check_types(spec: &FactSpec, operator: &Operator) -> Result<(), String> {
    let ty = spec.ty;
    let scalar_ok = |v: &Value| match ty {
        FactType::Bool => v.is_boolean(),
        FactType::Number => v.is_number(),
        FactType::String => v.is_string(),
        FactType::StringList => v.is_array(),
        FactType::Map | FactType::Object => v.is_object(),
        FactType::ObjectList => v.is_array(),
    };
    let element_ok = |v: &Value| match ty {
        FactType::StringList => v.is_string(),
        FactType::Map => v.is_string(),
        FactType::String => v.is_string(),
        FactType::ObjectList => v.is_object(),
        _ => false,
    };
    let bad_value = |v: &Value| {
        Err(format!(
            "fact `{}` is a {}; {} can never match it",
            spec.name,
            ty.describe(),
            compact(v)
        ))
    };
    let bad_operator = |op: &str| {
        Err(format!(
            "fact `{}` is a {}; `{op}` does not apply to it",
            spec.name,
            ty.describe()
        ))
    };
    match operator {
        Operator::Exists(_) => Ok(()),
        Operator::Equals(v) | Operator::NotEquals(v) => {
            if scalar_ok(v) {
                Ok(())
            } else {
                bad_value(v)
            }
        }
        Operator::In(vs) | Operator::NotIn(vs) => match vs.iter().find(|v| !scalar_ok(v)) {
            Some(v) => bad_value(v),
            None => Ok(()),
        },
        Operator::Matches(_) | Operator::NotMatches(_) => match ty {
            FactType::String | FactType::StringList => Ok(()),
            _ => bad_operator("matches"),
        },
        Operator::GreaterThan(_)
        | Operator::GreaterThanOrEqual(_)
        | Operator::LessThan(_)
        | Operator::LessThanOrEqual(_) => match ty {
            FactType::Number => Ok(()),
            _ => bad_operator("a numeric comparison"),
        },
        Operator::Contains(v) => match ty {
            FactType::Bool | FactType::Number | FactType::Object => bad_operator("contains"),
            _ if element_ok(v) => Ok(()),
            _ => bad_value(v),
        },
        Operator::ContainsAny(vs) => match ty {
            FactType::Bool | FactType::Number | FactType::Object => bad_operator("containsAny"),
            _ => match vs.iter().find(|v| !element_ok(v)) {
                Some(v) => bad_value(v),
                None => Ok(()),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(yaml: &str) -> Result<Condition, Vec<String>> {
        let located: Located<model::Condition> =
            serde_saphyr::from_str(yaml).map_err(|e| vec![e.to_string()])?;
        let mut problems = Problems::new(std::path::Path::new("t.yaml"));
        let compiled = compile(&located, &mut problems);
        let findings: Vec<String> = problems
            .into_findings()
            .iter()
            .map(ToString::to_string)
            .collect();
        match compiled {
            Some(c) if findings.is_empty() => Ok(c),
            _ => Err(findings),
        }
    }

    fn eval(yaml: &str, context: &Value, unknown: &[(&str, &str)]) -> Verdict {
        let condition = parse(yaml).expect("condition compiles");
        let unknown: BTreeMap<String, String> = unknown
            .iter()
            .map(|(g, r)| (catalog::normalize_group(g), r.to_string()))
            .collect();
        condition.eval(&Scope {
            context,
            unknown: &unknown,
        })
    }

    fn ctx() -> Value {
        json!({
            "facts": {
                "node": {"name": "n1", "ready": true, "fenced": false, "heartbeatAgeSeconds": 12},
                "pod": {"labels": {"role": "leader", "app": "db"}, "claims": ["data-db-0"]},
                "owners": {"statefulSet": "db", "job": null},
            },
            "intent": {"type": "ForceDelete", "removedFinalizers": ["kubernetes.io/pvc-protection", "x/y"]},
            "requester": {"username": "alice", "groups": ["devs"]},
            "object": null,
        })
    }

    #[test]
    fn fact_equals_and_witness() {
        let v = eval("fact: node.ready\nequals: true\n", &ctx(), &[]);
        assert_eq!(v.truth, Truth::True);
        assert_eq!(v.because, vec!["facts.node.ready is true"]);
        let v = eval("fact: node.fenced\nequals: true\n", &ctx(), &[]);
        assert_eq!(v.truth, Truth::False);
    }

    #[test]
    fn missing_values_satisfy_only_exists_false() {
        let c = ctx();
        assert_eq!(eval("fact: owners.job\nexists: true\n", &c, &[]).truth, Truth::False);
        assert_eq!(eval("fact: owners.job\nexists: false\n", &c, &[]).truth, Truth::True);
        assert_eq!(
            eval("fact: owners.job.name\nnotEquals: x\n", &c, &[]).truth,
            Truth::False
        );
        assert_eq!(
            eval("fact: owners.statefulSet\nnotEquals: web\n", &c, &[]).truth,
            Truth::True
        );
    }

    #[test]
    fn jsonpath_selection_with_brackets() {
        let c = ctx();
        let v = eval(
            "path: \"$.facts.pod.labels['role']\"\nin: [leader, primary]\n",
            &c,
            &[],
        );
        assert_eq!(v.truth, Truth::True);
        assert_eq!(v.because, vec!["$.facts.pod.labels['role'] is \"leader\""]);
        let v = eval("path: $.intent.removedFinalizers[*]\nmatches: ^kubernetes\\.io/\n", &c, &[]);
        assert_eq!(v.truth, Truth::True);
    }

    #[test]
    fn numeric_and_list_operators() {
        let c = ctx();
        assert_eq!(
            eval("fact: node.heartbeatAgeSeconds\ngreaterThan: 10\n", &c, &[]).truth,
            Truth::True
        );
        assert_eq!(
            eval("fact: node.heartbeatAgeSeconds\nlessThanOrEqual: 11\n", &c, &[]).truth,
            Truth::False
        );
        assert_eq!(
            eval(
                "fact: intent.removedFinalizers\ncontains: kubernetes.io/pvc-protection\n",
                &c,
                &[]
            )
            .truth,
            Truth::True
        );
        assert_eq!(
            eval("fact: intent.removedFinalizers\ncontainsAny: [orphan, foregroundDeletion]\n", &c, &[]).truth,
            Truth::False
        );
        assert_eq!(
            eval("fact: requester.username\nnotMatches: '^system:'\n", &c, &[]).truth,
            Truth::True
        );
        assert_eq!(
            eval("fact: pod.labels\ncontains: role\n", &c, &[]).truth,
            Truth::True
        );
    }

    #[test]
    fn three_valued_logic() {
        let c = ctx();
        let unknown = [("leader", "Lease: not in the snapshot")];
        let leaf = "fact: leader.isLeader\nequals: true\n";
        let v = eval(leaf, &c, &unknown);
        assert_eq!(v.truth, Truth::Unknown);
        assert_eq!(
            Missing::describe(&v.missing),
            "facts.leader.isLeader (Lease: not in the snapshot)"
        );
        // all: one false part decides regardless of the unknown one.
        let all = "all:\n  - fact: node.fenced\n    equals: true\n  - fact: leader.isLeader\n    equals: true\n";
        assert_eq!(eval(all, &c, &unknown).truth, Truth::False);
        // any: one true part decides.
        let any = "any:\n  - fact: leader.isLeader\n    equals: true\n  - path: \"$.facts.pod.labels['role']\"\n    equals: leader\n";
        assert_eq!(eval(any, &c, &unknown).truth, Truth::True);
        // not keeps unknown unknown.
        let not = "not:\n  fact: leader.isLeader\n  equals: true\n";
        assert_eq!(eval(not, &c, &unknown).truth, Truth::Unknown);
        // Request facts are never unknown.
        let v = eval("fact: intent.type\nequals: ForceDelete\n", &c, &[("intent", "x")]);
        assert_eq!(v.truth, Truth::True);
        // A JSONPath into an unknown group is unknown too.
        let v = eval("path: $.facts.leader.isLeader\nequals: true\n", &c, &unknown);
        assert_eq!(v.truth, Truth::Unknown);
    }

    #[test]
    fn description_replaces_generated_text() {
        let v = eval(
            "fact: node.ready\nequals: true\ndescription: the node is alive\n",
            &ctx(),
            &[],
        );
        assert_eq!(v.because, vec!["the node is alive"]);
    }

    #[test]
    fn rejects_with_locations() {
        let err = parse("fact: node.redy\nequals: true\n").unwrap_err();
        assert_eq!(
            err,
            vec!["t.yaml:1:7: unknown fact `node.redy` (did you mean `node.ready`?); see docs/policies.md for the list"]
        );
        let err = parse("fact: node.ready\nequals: \"true\"\n").unwrap_err();
        assert!(err[0].contains("is a boolean"), "{err:?}");
        let err = parse("path: $.object[\nexists: true\n").unwrap_err();
        assert_eq!(
            err[0],
            "t.yaml:1:7: invalid JSONPath `$.object[`: expected selector at column 10"
        );
        let err = parse("path: $.objekt.metadata\nexists: true\n").unwrap_err();
        assert!(err[0].contains("not in the evaluation context"), "{err:?}");
        let err = parse("path: $.facts.nodes.ready\nexists: true\n").unwrap_err();
        assert!(err[0].contains("unknown fact group `nodes`"), "{err:?}");
        let err = parse("fact: pod.name\nmatches: \"(\"\n").unwrap_err();
        assert!(err[0].starts_with("t.yaml:2:10: invalid regular expression"), "{err:?}");
        let err = parse("fact: pod.name\nequals: a\nin: [b]\n").unwrap_err();
        assert!(err[0].contains("exactly one operator"), "{err:?}");
        let err = parse("fact: pod.name\n").unwrap_err();
        assert!(err[0].contains("found none"), "{err:?}");
        let err = parse("all: []\n").unwrap_err();
        assert!(err[0].contains("at least one"), "{err:?}");
        let err = parse("fact: node.ready\npath: $.x\nequals: 1\n").unwrap_err();
        assert!(err[0].contains("exactly one of"), "{err:?}");
        let err = parse("fact: node.ready\ngreaterThan: 1\n").unwrap_err();
        assert!(err[0].contains("numeric comparison"), "{err:?}");
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(!json_eq(&json!(1), &json!("1")));
    }
}
