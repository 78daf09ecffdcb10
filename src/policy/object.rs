//! A ForceDeletionPolicy object, as the API server holds it, through the
//! same loader as files: what `forcegate lint` reports by line, this
//! reports by field path (`spec.rules[0].conditions[1].path`), which is
//! what `kubectl apply` and a status condition can show.
//!
//! The object is written as pretty-printed JSON (YAML's flow style, one
//! key or item per line) and loaded as text; each line of that text maps
//! back to the field it holds.

use std::fmt;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::compile::Policy;
use super::load;

/// One problem, at a field of the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldProblem {
    /// `spec.conditions[0].fact`; empty for the object as a whole.
    pub field: String,
    pub message: String,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// Every problem, one per line, for messages and conditions.
pub fn describe(problems: &[FieldProblem]) -> String {
    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

/// Compile `object` (apiVersion, kind, metadata, spec; status and server
/// metadata are ignored) as the loader compiles a file.
pub fn compile(object: &Value) -> Result<Policy, Vec<FieldProblem>> {
    let document = policy_document(object);
    let name = document
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let source = PathBuf::from(format!("forcedeletionpolicy/{name}"));
    // `to_string_pretty` of a `Value` cannot fail.
    let text = serde_json::to_string_pretty(&document).unwrap_or_default();
    let fields = line_fields(&document);
    let (mut policies, findings) = load::check_text(&source, &text);
    if findings.is_empty() && policies.len() == 1 {
        return Ok(policies.remove(0));
    }
    let mut problems: Vec<FieldProblem> = findings
        .into_iter()
        .map(|finding| FieldProblem {
            field: usize::try_from(finding.line)
                .ok()
                .and_then(|line| line.checked_sub(1))
                .and_then(|index| fields.get(index))
                .cloned()
                .unwrap_or_default(),
            message: finding.message,
        })
        .collect();
    if problems.is_empty() {
        problems.push(FieldProblem {
            field: String::new(),
            message: "holds no policy".into(),
        });
    }
    Err(problems)
}

/// What a policy file holds of the object: everything but the status and
/// what the API server adds to metadata.
fn policy_document(object: &Value) -> Value {
    let mut document = Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(value) = object.get(key) {
            document.insert(key.into(), value.clone());
        }
    }
    let mut metadata = Map::new();
    for key in ["name", "labels", "annotations"] {
        if let Some(value) = object.pointer(&format!("/metadata/{key}")) {
            metadata.insert(key.into(), value.clone());
        }
    }
    document.insert("metadata".into(), Value::Object(metadata));
    document.insert(
        "spec".into(),
        object.get("spec").cloned().unwrap_or(Value::Null),
    );
    Value::Object(document)
}

/// The field each line of `serde_json::to_string_pretty(value)` holds:
/// a key or an item per line, a container's closing bracket on its own.
fn line_fields(value: &Value) -> Vec<String> {
    let mut lines = vec![String::new()];
    walk(value, "", &mut lines);
    lines
}

fn walk(value: &Value, path: &str, lines: &mut Vec<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let child_path = field(path, key);
                lines.push(child_path.clone());
                walk(child, &child_path, lines);
            }
            lines.push(path.to_owned());
        }
        Value::Array(items) if !items.is_empty() => {
            for (index, child) in items.iter().enumerate() {
                let child_path = format!("{path}[{index}]");
                lines.push(child_path.clone());
                walk(child, &child_path, lines);
            }
            lines.push(path.to_owned());
        }
        _ => {}
    }
}

/// `parent.key`, or `parent[key]` for a key that is not a plain name (a
/// label such as `app.kubernetes.io/name`).
fn field(parent: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{key}]"),
    }
}

#[cfg(test)]
mod tests;
