//! From the YAML model to an evaluable [`Policy`], collecting every problem
//! with its location instead of stopping at the first.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::condition::{self, Condition, Selection};
use super::error::Problems;
use super::matcher::{self, Matcher};
use super::message::Template;
use super::model::{self, API_VERSION, KIND, Located, UnknownAction};
use super::reads::Reads;
use crate::decision::Action;

/// A validated policy, ready to evaluate.
#[derive(Clone, Debug)]
pub struct Policy {
    pub name: Arc<str>,
    pub description: Option<String>,
    /// Where it was defined, for logs and `lint`.
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
    pub(crate) matcher: Matcher,
    pub(crate) rules: Vec<Rule>,
}

impl Policy {
    /// Whether evaluating the policy may read fact group `group`: through
    /// its selectors, a condition, or a message or remediation hole.
    pub fn may_read(&self, group: &str) -> bool {
        self.matcher.may_read(group) || self.selections().any(|s| s.may_read(group))
    }

    /// Add what evaluating the policy may read of the context.
    pub(crate) fn reads(&self, reads: &mut Reads) {
        self.matcher.reads(reads);
        self.selections()
            .for_each(|selection| reads.plan(selection.plan()));
    }

    /// Every selection of its conditions, messages and remediations.
    fn selections(&self) -> impl Iterator<Item = &Selection> {
        self.rules.iter().flat_map(|rule| {
            let templates = std::iter::once(&rule.message).chain(&rule.remediation);
            rule.conditions
                .iter()
                .flat_map(Condition::selections)
                .chain(templates.flat_map(Template::selections))
        })
    }
}

/// One rule; inline single-rule policies have `name: None`.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub name: Option<String>,
    pub conditions: Vec<Condition>,
    pub action: Action,
    pub on_unknown: UnknownAction,
    pub message: Template,
    pub remediation: Option<Template>,
}

/// Compile one document. Problems are added to `problems`; `None` if any.
pub(crate) fn compile(
    doc: &model::PolicyDocument,
    file: &Path,
    problems: &mut Problems,
) -> Option<Policy> {
    let before = problems.len();
    if doc.api_version.value != API_VERSION {
        problems.at(
            doc.api_version.line,
            doc.api_version.column,
            format!(
                "apiVersion must be `{API_VERSION}`, not `{}`",
                doc.api_version.value
            ),
        );
    }
    if doc.kind.value != KIND {
        problems.at(
            doc.kind.line,
            doc.kind.column,
            format!("kind must be `{KIND}`, not `{}`", doc.kind.value),
        );
    }
    let name = &doc.metadata.name;
    if !is_dns_label(&name.value) {
        problems.at(
            name.line,
            name.column,
            format!(
                "metadata.name `{}` must be a DNS-1123 label (lowercase letters, digits and `-`, at most 63)",
                name.value
            ),
        );
    }
    let spec = &doc.spec;
    let matcher = matcher::compile(&spec.matches, &spec.exclude, problems);
    let default_unknown = spec
        .on_unknown
        .as_ref()
        .map_or(UnknownAction::Deny, |u| u.value);
    let rules = compile_rules(spec, default_unknown, (name.line, name.column), problems);
    if problems.len() > before {
        return None;
    }
    Some(Policy {
        name: name.value.as_str().into(),
        description: spec.description.clone(),
        file: file.to_path_buf(),
        line: name.line,
        column: name.column,
        matcher,
        rules,
    })
}

fn compile_rules(
    spec: &model::PolicySpec,
    default_unknown: UnknownAction,
    at: (u32, u32),
    problems: &mut Problems,
) -> Vec<Rule> {
    let inline = spec.conditions.is_some()
        || spec.action.is_some()
        || spec.message.is_some()
        || spec.remediation.is_some();
    match (&spec.rules, inline) {
        (Some(_), true) => {
            problems.at(
                at.0,
                at.1,
                "spec has both `rules` and inline `conditions`/`action`/`message`; use one form",
            );
            Vec::new()
        }
        (None, false) => {
            problems.at(
                at.0,
                at.1,
                "spec needs `action` and `message` (one rule) or `rules` (several)",
            );
            Vec::new()
        }
        (None, true) => {
            let (Some(action), Some(message)) = (&spec.action, &spec.message) else {
                problems.at(
                    at.0,
                    at.1,
                    "an inline rule needs both `action` and `message`",
                );
                return Vec::new();
            };
            let conditions = spec.conditions.as_deref().unwrap_or_default();
            compile_rule(
                None,
                conditions,
                action,
                default_unknown,
                message,
                spec.remediation.as_ref(),
                problems,
            )
            .into_iter()
            .collect()
        }
        (Some(rules), false) => {
            if rules.is_empty() {
                problems.at(at.0, at.1, "`rules` needs at least one rule");
            }
            let mut seen = Vec::new();
            rules
                .iter()
                .filter_map(|r| {
                    let rule = &r.value;
                    if !is_dns_label(&rule.name.value) {
                        problems.at(
                            rule.name.line,
                            rule.name.column,
                            format!("rule name `{}` must be a DNS-1123 label", rule.name.value),
                        );
                    } else if seen.contains(&rule.name.value) {
                        problems.at(
                            rule.name.line,
                            rule.name.column,
                            format!("duplicate rule name `{}`", rule.name.value),
                        );
                    }
                    seen.push(rule.name.value.clone());
                    let on_unknown = rule
                        .on_unknown
                        .as_ref()
                        .map_or(default_unknown, |u| u.value);
                    compile_rule(
                        Some(rule.name.value.clone()),
                        &rule.conditions,
                        &rule.action,
                        on_unknown,
                        &rule.message,
                        rule.remediation.as_ref(),
                        problems,
                    )
                })
                .collect()
        }
    }
}

fn compile_rule(
    name: Option<String>,
    conditions: &[Located<model::Condition>],
    action: &Located<Action>,
    on_unknown: UnknownAction,
    message: &Located<String>,
    remediation: Option<&Located<String>>,
    problems: &mut Problems,
) -> Option<Rule> {
    let compiled: Vec<Option<Condition>> = conditions
        .iter()
        .map(|c| condition::compile(c, problems))
        .collect();
    let message = template(message, problems);
    let remediation = remediation.map(|r| template(r, problems));
    Some(Rule {
        name,
        conditions: compiled.into_iter().collect::<Option<Vec<_>>>()?,
        action: action.value,
        on_unknown,
        message: message?,
        remediation: match remediation {
            Some(r) => Some(r?),
            None => None,
        },
    })
}

fn template(text: &Located<String>, problems: &mut Problems) -> Option<Template> {
    if text.value.trim().is_empty() {
        problems.at(text.line, text.column, "message must not be empty");
        return None;
    }
    match Template::parse(&text.value) {
        Ok(t) => Some(t),
        Err((offset, reason)) => {
            // Exact for one-line plain scalars; the scalar's start otherwise.
            let column = if text.value.contains('\n') {
                text.column
            } else {
                text.column + offset as u32
            };
            problems.at(text.line, column, format!("in template: {reason}"));
            None
        }
    }
}

/// Kubernetes DNS-1123 label.
pub(crate) fn is_dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}
