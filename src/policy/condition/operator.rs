//! Operators: how a selection's values are tested, and which operators can
//! ever hold for a fact's type (so `lint` rejects `equals: "true"` on a boolean).

use std::fmt::Write as _;

use regex::Regex;
use serde_json::Value;

use crate::policy::catalog::{FactSpec, FactType};

#[derive(Clone, Debug)]
pub(super) enum Operator {
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

impl Operator {
    /// Whether it holds for the selected values; when it does, `lead` and
    /// then how (`is true`, `is absent`) are appended to `witness`. Nothing
    /// is written for a test that fails, the usual case.
    pub(super) fn explain(
        &self,
        values: &[&Value],
        witness: &mut String,
        lead: impl FnOnce(&mut String),
    ) -> bool {
        match self.check(values) {
            Held::No => return false,
            Held::By(value) => {
                lead(witness);
                push_is(witness, value);
            }
            Held::ByEvery => {
                lead(witness);
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        witness.push_str(", ");
                    }
                    push_is(witness, value);
                }
            }
            Held::ByAbsence => {
                lead(witness);
                witness.push_str("is absent");
            }
        }
        true
    }

    /// Positive operators hold when some value satisfies them; negative
    /// ones when values exist and none matches.
    fn check<'v>(&self, values: &[&'v Value]) -> Held<'v> {
        let some = |pred: &dyn Fn(&Value) -> bool| match values.iter().find(|v| pred(v)) {
            Some(value) => Held::By(value),
            None => Held::No,
        };
        let none = |pred: &dyn Fn(&Value) -> bool| {
            if values.is_empty() || values.iter().any(|v| pred(v)) {
                Held::No
            } else {
                Held::ByEvery
            }
        };
        match self {
            Operator::Equals(want) => some(&|v| json_eq(v, want)),
            Operator::NotEquals(want) => none(&|v| json_eq(v, want)),
            Operator::In(set) => some(&|v| set.iter().any(|w| json_eq(v, w))),
            Operator::NotIn(set) => none(&|v| set.iter().any(|w| json_eq(v, w))),
            Operator::Exists(true) => some(&|_| true),
            Operator::Exists(false) if values.is_empty() => Held::ByAbsence,
            Operator::Exists(false) => Held::No,
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

    pub(super) fn describe(&self) -> String {
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

/// Which values made an operator hold.
enum Held<'v> {
    No,
    /// This one (positive operators, `exists`).
    By(&'v Value),
    /// Every selected value, none matching (negative operators).
    ByEvery,
    /// There were none (`exists: false`).
    ByAbsence,
}

fn push_is(out: &mut String, value: &Value) {
    out.push_str("is ");
    push_compact(out, value);
}

/// The most runes of a value an explanation shows.
const COMPACT_RUNES: usize = 80;

/// Short JSON for explanations; long values are summarized.
pub(super) fn compact(value: &Value) -> String {
    let mut text = String::new();
    push_compact(&mut text, value);
    text
}

/// [`compact`], appended to `out`.
fn push_compact(out: &mut String, value: &Value) {
    // The usual witnesses (a flag, a short name) written as their JSON
    // directly: the formatter is most of an explanation's cost.
    match value {
        Value::Bool(true) => return out.push_str("true"),
        Value::Bool(false) => return out.push_str("false"),
        Value::String(text)
            if text.len() <= COMPACT_RUNES - 2
                && !text.contains(|c: char| c == '"' || c == '\\' || c.is_control()) =>
        {
            out.push('"');
            out.push_str(text);
            return out.push('"');
        }
        _ => {}
    }
    let start = out.len();
    // Writing to a String cannot fail.
    let _ = write!(out, "{value}");
    if out[start..].chars().count() <= COMPACT_RUNES {
        return;
    }
    match value {
        Value::Array(items) => {
            out.truncate(start);
            let _ = write!(out, "a list of {}", items.len());
        }
        Value::Object(map) => {
            out.truncate(start);
            let _ = write!(out, "an object with {} keys", map.len());
        }
        _ => {
            let cut = out[start..]
                .char_indices()
                .nth(COMPACT_RUNES - 3)
                .map_or(out.len(), |(i, _)| start + i);
            out.truncate(cut);
            out.push('…');
        }
    }
}

/// JSON equality where numbers compare by value as JSONPath filters
/// compare them (jsonpath-rust: as f64, less than `f64::EPSILON` apart), so
/// 1 equals 1.0 and a condition agrees with a filter on the same number.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .zip(y.as_f64())
            .is_some_and(|(x, y)| (x - y).abs() < f64::EPSILON),
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

/// Reject operators that can never hold for the fact's type, e.g. comparing
/// a boolean with the string "true".
pub(super) fn check_types(spec: &FactSpec, operator: &Operator) -> Result<(), String> {
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
