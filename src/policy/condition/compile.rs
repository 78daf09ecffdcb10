//! Compilation: model → runtime condition, with every problem located.

use jsonpath_rust::parser::model::{Segment, Selector};
use serde_json::Value;

use super::operator::{Operator, check_types};
use super::{Condition, Kind, Selection};
use crate::policy::catalog;
use crate::policy::error::{Problems, one_line};
use crate::policy::model::{self, Located};
use crate::policy::path::{Plan, Root};

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
    if let Selection::Fact { spec, .. } = &selection
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
            Some(spec) => Some(Selection::fact(spec)),
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
    let query = jsonpath_rust::parser::parse_json_path(text).map_err(|e| {
        format!(
            "invalid JSONPath `{text}`: {}",
            jsonpath_reason(&e.to_string())
        )
    })?;
    let names: Vec<Option<String>> = query
        .segments
        .iter()
        .take(2)
        .map(|s| segment_name(s).map(str::to_string))
        .collect();
    let root = names.first().cloned().flatten();
    if let Some(root) = root.as_deref()
        && Root::named(root).is_none()
    {
        return Err(format!(
            "JSONPath `{text}` starts at `{root}`, which is not in the evaluation context (one of: {})",
            Root::list()
        ));
    }
    let (group, any_fact) = match (root.as_deref(), names.get(1).cloned().flatten()) {
        (Some("facts"), Some(group)) => {
            if !catalog::GROUPS.contains(&group.as_str()) {
                return Err(format!(
                    "JSONPath `{text}` reads unknown fact group `{group}` (one of: {})",
                    catalog::GROUPS.join(", ")
                ));
            }
            (Some(group), false)
        }
        // `$..name`, `$[*]`, `$.facts[*]`: any group may be read.
        (Some("facts"), None) | (None, _) => (None, true),
        _ => (None, false),
    };
    Ok(Selection::Path {
        text: text.to_string(),
        plan: Plan::new(query),
        group,
        any_fact,
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
