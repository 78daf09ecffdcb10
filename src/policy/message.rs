//! Message templates and the API server's limits on what we send back.
//!
//! A template is text with `{{ expr }}` holes, where `expr` is a JSONPath
//! without the leading `$.` (`facts.node.name`, `object.metadata.labels['app']`,
//! `facts.volumes.claims[*].claim`) and may end in `| default "text"`.
//! Holes are parsed when the policy loads, so a typo is a load error with a
//! location, not a broken message at 3 a.m.

use serde_json::Value;

use super::condition::{self, Scope, Selection};
pub use crate::admission::{MAX_WARNING_RUNES, MAX_WARNINGS_BYTES, clean_warning};
/// Shown for a hole whose value is absent.
pub const ABSENT: &str = "<none>";
/// Shown for a hole reading a fact group the cluster view could not answer.
pub const UNKNOWN: &str = "<unknown>";

/// Audit annotation keys. The API server prefixes each with the webhook's
/// name (`validate.forcegate.dev/decision`) and rejects keys that already
/// contain a `/`, so these are bare qualified names.
pub mod audit {
    pub const DECISION: &str = "decision";
    pub const INTENT: &str = "intent";
    pub const POLICIES: &str = "policies";
    pub const UNKNOWN_FACTS: &str = "unknown-facts";
    pub const BREAK_GLASS: &str = "break-glass";
    pub const BREAK_GLASS_OVERRODE: &str = "break-glass-overrode";
    pub const BREAK_GLASS_REFUSED: &str = "break-glass-refused";
}

/// A parsed template.
#[derive(Clone, Debug)]
pub struct Template {
    parts: Vec<Part>,
    /// What a rendering usually needs: the literal text plus room per hole
    /// (a message grown from empty reallocates five or six times).
    size_hint: usize,
}

/// Room reserved per hole when rendering (a name, a list of two).
const HOLE_SIZE_HINT: usize = 32;

#[derive(Clone, Debug)]
enum Part {
    Text(String),
    Hole {
        selection: Selection,
        default: Option<String>,
    },
}

impl Template {
    /// Parse; the error says what is wrong and at which character offset.
    pub fn parse(text: &str) -> Result<Template, (usize, String)> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(Part::Text(rest[..start].to_string()));
            }
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or((offset + start, "`{{` without a closing `}}`".to_string()))?;
            let hole = after[..end].trim();
            parts.push(parse_hole(hole).map_err(|e| (offset + start, e))?);
            let consumed = start + 2 + end + 2;
            offset += consumed;
            rest = &rest[consumed..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        let size_hint = parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.len(),
                Part::Hole { .. } => HOLE_SIZE_HINT,
            })
            .sum();
        Ok(Template { parts, size_hint })
    }

    /// Every selection in the template's holes.
    pub fn selections(&self) -> impl Iterator<Item = &Selection> {
        self.parts.iter().filter_map(|part| match part {
            Part::Hole { selection, .. } => Some(selection),
            Part::Text(_) => None,
        })
    }

    /// Render against the evaluation context, into one buffer.
    pub fn render(&self, scope: &Scope<'_>) -> String {
        let mut out = String::with_capacity(self.size_hint);
        self.render_into(scope, &mut out);
        out
    }

    /// What a rendering usually takes (literal text plus room per hole).
    pub fn size_hint(&self) -> usize {
        self.size_hint
    }

    /// Render, appending to `out` (a denial's message is written in place).
    pub fn render_into(&self, scope: &Scope<'_>, out: &mut String) {
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Hole { selection, default } => {
                    render_hole(out, selection, default.as_deref(), scope)
                }
            }
        }
    }
}

fn parse_hole(hole: &str) -> Result<Part, String> {
    let (expr, default) = match hole.split_once('|') {
        Some((expr, filter)) => {
            let filter = filter.trim();
            let value = filter
                .strip_prefix("default")
                .map(str::trim)
                .and_then(|v| v.strip_prefix('"'))
                .and_then(|v| v.strip_suffix('"'))
                .ok_or_else(|| {
                    format!("unknown filter `{filter}` in `{{{{ {hole} }}}}`; only `default \"text\"` exists")
                })?;
            (expr.trim(), Some(value.to_string()))
        }
        None => (hole, None),
    };
    if expr.is_empty() {
        return Err("empty `{{ }}`".into());
    }
    let path = if expr.starts_with('$') {
        expr.to_string()
    } else {
        format!("$.{expr}")
    };
    let selection = condition::compile_path(&path)?;
    Ok(Part::Hole { selection, default })
}

/// The hole's values joined by ", ", its default if there are none.
fn render_hole(out: &mut String, selection: &Selection, default: Option<&str>, scope: &Scope<'_>) {
    match selection.values(scope) {
        Err(_) => out.push_str(UNKNOWN),
        Ok(values) if values.is_empty() => out.push_str(default.unwrap_or(ABSENT)),
        Ok(values) => push_joined(out, values),
    }
}

/// Plain text for a value: strings bare, lists comma-joined, maps `k=v`.
fn push_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str(ABSENT),
        Value::String(s) => out.push_str(s),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::Array(items) => push_joined(out, items),
        Value::Object(map) => {
            for (i, (key, value)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push('=');
                push_value(out, value);
            }
        }
    }
}

/// `values` rendered and joined with ", ".
fn push_joined<'v>(out: &mut String, values: impl IntoIterator<Item = &'v Value>) {
    for (i, value) in values.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_value(out, value);
    }
}

#[cfg(test)]
mod tests;
