//! Reading policy files: all-or-nothing, every problem with `file:line:col`.
//!
//! A policy directory may also hold test suites (`*_test.yaml`,
//! `*.test.yaml`), `schema.json` and, when mounted from a ConfigMap, the
//! kubelet's hidden `..data` entries; only `*.yaml`/`*.yml` policy files at
//! the top level are read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::{DefaultMessageFormatter, MessageFormatter};

use super::compile::{self, Policy};
use super::error::{Finding, PolicyError, Problems, one_line};
use super::model::{KIND, Located, PolicyDocument};

/// Policy files in `dir`, sorted, skipping suites and hidden entries.
pub fn policy_files(dir: &Path) -> Result<Vec<PathBuf>, PolicyError> {
    let io = |source| PolicyError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if is_policy_file(&path) && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// A YAML file that is not hidden and not a test suite.
pub fn is_policy_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let yaml = name.ends_with(".yaml") || name.ends_with(".yml");
    let suite = is_suite_name(name);
    yaml && !suite && !name.starts_with('.')
}

/// `*_test.yaml` / `*.test.yaml` (and `.yml`).
pub fn is_suite_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(name);
    stem.ends_with("_test") || stem.ends_with(".test")
}

/// Files and directories given on a command line, expanded to policy files.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PolicyError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| PolicyError::Io {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            files.extend(policy_files(path)?);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Load and compile `files` as one set: any problem anywhere fails the lot.
pub fn load_files(files: &[PathBuf]) -> Result<Vec<Policy>, PolicyError> {
    if files.is_empty() {
        return Err(PolicyError::Empty {
            path: PathBuf::from("."),
        });
    }
    let (mut policies, findings) = check_files(files)?;
    if findings.is_empty() {
        policies.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(policies)
    } else {
        Err(PolicyError::Invalid(findings))
    }
}

/// Every problem in `files` as one set (for `lint`): per-file findings plus
/// names defined twice. Only unreadable files are an error.
pub fn check_files(files: &[PathBuf]) -> Result<(Vec<Policy>, Vec<Finding>), PolicyError> {
    let mut policies = Vec::new();
    let mut findings = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|source| PolicyError::Io {
            path: file.clone(),
            source,
        })?;
        let (mut found, problems) = check_text(file, &text);
        policies.append(&mut found);
        findings.extend(problems);
    }
    findings.extend(duplicates(&policies));
    findings.sort();
    Ok((policies, findings))
}

/// Parse and compile one file's text; every problem found is returned.
pub fn check_text(file: &Path, text: &str) -> (Vec<Policy>, Vec<Finding>) {
    let mut problems = Problems::new(file);
    let docs = match parse_documents(text) {
        Ok(docs) => docs,
        Err((line, column, reason)) => {
            problems.at(line, column, reason);
            return (Vec::new(), problems.into_findings());
        }
    };
    if docs.is_empty() {
        problems.at(0, 0, format!("holds no {KIND} documents"));
    }
    let policies = docs
        .iter()
        .filter_map(|doc| compile::compile(doc, file, &mut problems))
        .collect();
    (policies, problems.into_findings())
}

/// Just enough to recognise what a document is before parsing it strictly,
/// so a stray suite or manifest gets "wrong kind", not "unknown field".
#[derive(Deserialize)]
struct Header {
    #[serde(default, rename = "kind")]
    kind: Option<Located<String>>,
    /// A `List`'s items, recognised the same way.
    #[serde(default)]
    items: Option<Vec<Header>>,
}

/// `kind` of the list `kubectl get ... -o yaml` prints for several objects.
const LIST_KIND: &str = "List";

/// A `List` of policies, as `kubectl get forcedeletionpolicies -o yaml`
/// prints it: only its items matter.
#[derive(Deserialize)]
struct ListDocument {
    items: Vec<PolicyDocument>,
}

/// YAML 1.2 booleans only (`no` and `n` stay strings, as in the snapshot
/// reader), no rendered snippets (errors are one line with a location).
pub fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.with_snippet = false;
    options
}

/// The policies in `text`: its documents, or the items of its `List`s.
fn parse_documents(text: &str) -> Result<Vec<PolicyDocument>, (u32, u32, String)> {
    let headers: Vec<Header> = serde_saphyr::from_str_multiple_with_options(text, yaml_options())
        .map_err(located_error)?;
    let mut first_list = None;
    for header in &headers {
        match &header.kind {
            Some(kind) if kind.value == LIST_KIND => {
                first_list.get_or_insert((kind.line, kind.column));
                header.items.iter().flatten().try_for_each(policy_kind)?;
            }
            _ => policy_kind(header)?,
        }
    }
    let lists = headers
        .iter()
        .filter(|h| h.kind.as_ref().is_some_and(|k| k.value == LIST_KIND))
        .count();
    match first_list {
        None => serde_saphyr::from_str_multiple_with_options(text, yaml_options())
            .map_err(located_error),
        Some(_) if lists == headers.len() => {
            let lists: Vec<ListDocument> =
                serde_saphyr::from_str_multiple_with_options(text, yaml_options())
                    .map_err(located_error)?;
            Ok(lists.into_iter().flat_map(|list| list.items).collect())
        }
        Some((line, column)) => Err((
            line,
            column,
            format!("a file holds either {KIND} documents or `List`s of them, not both"),
        )),
    }
}

/// A document that names a kind must name the policy kind.
fn policy_kind(header: &Header) -> Result<(), (u32, u32, String)> {
    match &header.kind {
        Some(kind) if kind.value != KIND => Err((
            kind.line,
            kind.column,
            format!("kind must be `{KIND}`, not `{}`", kind.value),
        )),
        _ => Ok(()),
    }
}

/// A YAML error as (line, column, one-line reason).
pub fn located_error(err: serde_saphyr::Error) -> (u32, u32, String) {
    let (line, column) = err.location().map_or((0, 0), |l| {
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        (clamp(l.line()), clamp(l.column()))
    });
    let reason = DefaultMessageFormatter.format_message(err.without_snippet());
    let reason = one_line(&reason);
    let reason = if reason.is_empty() {
        one_line(&err.to_string())
    } else {
        reason
    };
    (line, column, reason)
}

fn duplicates(policies: &[Policy]) -> Vec<Finding> {
    let mut first: BTreeMap<&str, &Policy> = BTreeMap::new();
    let mut findings = Vec::new();
    for policy in policies {
        match first.get(&*policy.name) {
            Some(original) => findings.push(Finding {
                file: policy.file.clone(),
                line: policy.line,
                column: policy.column,
                message: format!(
                    "duplicate policy name `{}` (first defined at {}:{})",
                    policy.name,
                    original.file.display(),
                    original.line
                ),
            }),
            None => {
                first.insert(&policy.name, policy);
            }
        }
    }
    findings
}

#[cfg(test)]
mod tests;
