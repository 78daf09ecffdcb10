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
}

/// YAML 1.2 booleans only (`no` and `n` stay strings, as in the snapshot
/// reader), no rendered snippets (errors are one line with a location).
pub fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.with_snippet = false;
    options
}

fn parse_documents(text: &str) -> Result<Vec<PolicyDocument>, (u32, u32, String)> {
    let headers: Vec<Header> = serde_saphyr::from_str_multiple_with_options(text, yaml_options())
        .map_err(located_error)?;
    for header in &headers {
        match &header.kind {
            Some(kind) if kind.value != KIND => {
                return Err((
                    kind.line,
                    kind.column,
                    format!("kind must be `{KIND}`, not `{}`", kind.value),
                ));
            }
            _ => {}
        }
    }
    serde_saphyr::from_str_multiple_with_options(text, yaml_options()).map_err(located_error)
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
mod tests {
    use super::*;

    const GOOD: &str = "\
apiVersion: forcegate.dev/v1alpha1
kind: ForceDeletionPolicy
metadata:
  name: node-alive
spec:
  match:
    intents: [ForceDelete]
  conditions:
    - fact: node.ready
      equals: true
  action: Deny
  message: node {{ facts.node.name }} is Ready
";

    fn check(text: &str) -> Vec<String> {
        check_text(Path::new("p.yaml"), text)
            .1
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn good_policy_compiles() {
        let (policies, findings) = check_text(Path::new("p.yaml"), GOOD);
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(policies.len(), 1);
        assert_eq!(&*policies[0].name, "node-alive");
        assert_eq!(policies[0].line, 4);
    }

    #[test]
    fn yaml_errors_have_locations_and_one_line() {
        let found =
            check(&GOOD.replace("      equals: true", "      equals: true\n      bogus: 1"));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("p.yaml:11:7: unknown field `bogus`"),
            "{found:?}"
        );
        assert!(!found[0].contains('\n'));
        let found = check(&GOOD.replace("action: Deny", "action: Block"));
        assert!(
            found[0].starts_with("p.yaml:11:11: unknown variant `Block`"),
            "{found:?}"
        );
        let found = check("spec: [\n");
        assert!(found[0].starts_with("p.yaml:"), "{found:?}");
    }

    #[test]
    fn semantic_errors_are_all_reported() {
        let text = GOOD
            .replace("node.ready", "node.redy")
            .replace("name: node-alive", "name: Node_Alive")
            .replace("{{ facts.node.name }}", "{{ facts.node.name ");
        let found = check(&text);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found
                .iter()
                .any(|f| f.starts_with("p.yaml:4:9: metadata.name"))
        );
        assert!(
            found
                .iter()
                .any(|f| f.starts_with("p.yaml:9:13: unknown fact `node.redy`"))
        );
        assert!(
            found
                .iter()
                .any(|f| f.starts_with("p.yaml:12:17: in template")),
            "{found:?}"
        );
    }

    #[test]
    fn wrong_kind_is_named() {
        let found = check("kind: PolicyTestSuite\ncases: []\n");
        assert_eq!(
            found,
            vec!["p.yaml:1:7: kind must be `ForceDeletionPolicy`, not `PolicyTestSuite`"]
        );
    }

    #[test]
    fn multiple_documents_and_duplicates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.yaml");
        let b = dir.path().join("b.yaml");
        std::fs::write(
            &a,
            format!("{GOOD}---\n{}", GOOD.replace("node-alive", "other")),
        )
        .expect("write");
        std::fs::write(&b, GOOD).expect("write");
        std::fs::write(dir.path().join("a_test.yaml"), "kind: PolicyTestSuite\n").expect("write");
        std::fs::write(dir.path().join(".hidden.yaml"), "garbage: [").expect("write");
        let files = policy_files(dir.path()).expect("list");
        assert_eq!(files, vec![a.clone(), b.clone()]);
        let err = load_files(&files).expect_err("duplicate");
        let text = err.to_string();
        assert!(
            text.contains("b.yaml:4:9: duplicate policy name `node-alive`"),
            "{text}"
        );
        std::fs::remove_file(&b).expect("rm");
        let policies = load_files(&policy_files(dir.path()).expect("list")).expect("loads");
        let names: Vec<&str> = policies.iter().map(|p| &*p.name).collect();
        assert_eq!(names, vec!["node-alive", "other"]);
    }

    #[test]
    fn suite_names() {
        assert!(is_suite_name("node-alive_test.yaml"));
        assert!(is_suite_name("node-alive.test.yml"));
        assert!(!is_suite_name("node-alive.yaml"));
    }
}
