//! Policy test suites: what `forcegate test` runs as a pull-request check.
//!
//! A suite names the policies under test, a cluster (inline objects and/or
//! snapshot files) and cases: a request (a full AdmissionReview file or a
//! shorthand built from the cluster objects) and what must come of it. Each
//! case goes through [`Engine::admit`], the very path the server takes, with
//! a recorder that writes nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwap;
use serde::Serialize;
use serde_json::Value;

use crate::cleanup::NoopRecorder;
use crate::decision::Action;
use crate::engine::{Endpoint, Engine, Settings};
use crate::policy::load::{is_suite_name, located_error, yaml_options};
use crate::policy::{PolicySet, model::API_VERSION};

pub mod build;
pub mod cluster;
mod expect;
pub mod model;
pub mod report;

pub use expect::check;

use model::{Case, Suite};

/// One suite's outcome. `error` is set when the suite could not run at all.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuiteReport {
    pub file: PathBuf,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub cases: Vec<CaseReport>,
}

impl SuiteReport {
    pub fn failed(&self) -> usize {
        self.cases.iter().filter(|c| !c.passed()).count()
    }
}

/// One case's outcome: what was observed and which expectations failed.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseReport {
    pub name: String,
    pub line: u32,
    pub failures: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    pub seconds: f64,
}

impl CaseReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// What the engine answered.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    pub intent: String,
    pub allowed: bool,
    pub denying_policies: Vec<String>,
    pub message: String,
    pub warnings: Vec<String>,
    pub recorded: bool,
    pub break_glass: bool,
}

/// All suites run, for the report and the exit code.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub suites: Vec<SuiteReport>,
}

impl Report {
    pub fn cases(&self) -> usize {
        self.suites.iter().map(|s| s.cases.len()).sum()
    }

    pub fn failed(&self) -> usize {
        self.suites.iter().map(SuiteReport::failed).sum()
    }

    pub fn errors(&self) -> usize {
        self.suites.iter().filter(|s| s.error.is_some()).count()
    }

    /// No errors and no failures.
    pub fn ok(&self) -> bool {
        self.failed() == 0 && self.errors() == 0
    }
}

/// Suite files among `paths` (directories searched recursively).
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut suites = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.is_dir() {
            for file in cluster::collect(std::slice::from_ref(path))? {
                if file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_suite_name)
                {
                    suites.push(file);
                }
            }
        } else {
            suites.push(path.clone());
        }
    }
    if suites.is_empty() {
        return Err(format!(
            "no test suites (*_test.yaml, *.test.yaml) in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(suites)
}

/// Run every suite in `paths`.
pub async fn run_paths(paths: &[PathBuf]) -> Result<Report, String> {
    let mut report = Report::default();
    for file in discover(paths)? {
        report.suites.push(run_file(&file).await);
    }
    Ok(report)
}

/// Run one suite file.
pub async fn run_file(file: &Path) -> SuiteReport {
    let mut report = SuiteReport {
        file: file.to_path_buf(),
        name: file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string(),
        error: None,
        cases: Vec::new(),
    };
    let prepared = match prepare(file) {
        Ok(prepared) => prepared,
        Err(err) => {
            report.error = Some(err);
            return report;
        }
    };
    report.name = prepared.suite.metadata.name.clone();
    for case in &prepared.suite.cases {
        report
            .cases
            .push(run_case(&prepared, &case.value, case.line).await);
    }
    report
}

struct Prepared {
    suite: Suite,
    dir: PathBuf,
    policies: Arc<ArcSwap<PolicySet>>,
    objects: Vec<Value>,
    missing: Vec<crate::cluster::Kind>,
    settings: Settings,
}

fn prepare(file: &Path) -> Result<Prepared, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let at = |line: u32, column: u32, reason: String| {
        format!("{}:{line}:{column}: {reason}", file.display())
    };
    let suite: Suite = serde_saphyr::from_str_with_options(&text, yaml_options()).map_err(|e| {
        let (line, column, reason) = located_error(e);
        at(line, column, reason)
    })?;
    if suite.api_version.value != API_VERSION {
        return Err(at(
            suite.api_version.line,
            suite.api_version.column,
            format!("apiVersion must be `{API_VERSION}`"),
        ));
    }
    if suite.kind.value != model::KIND {
        return Err(at(
            suite.kind.line,
            suite.kind.column,
            format!("kind must be `{}`, not `{}`", model::KIND, suite.kind.value),
        ));
    }
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let policy_paths: Vec<PathBuf> = suite.policies.iter().map(|p| dir.join(&p.value)).collect();
    for (path, located) in policy_paths.iter().zip(&suite.policies) {
        if !path.exists() {
            return Err(at(
                located.line,
                located.column,
                format!("policy path {} does not exist", path.display()),
            ));
        }
    }
    let policies = PolicySet::load_files(&policy_paths).map_err(|e| e.to_string())?;
    let cluster_files: Vec<PathBuf> = suite
        .cluster
        .files
        .iter()
        .map(|f| dir.join(&f.value))
        .collect();
    let mut objects = cluster::read_files(&cluster::collect(&cluster_files)?)?;
    objects.extend(suite.cluster.objects.iter().cloned());
    let missing = kinds(&suite.cluster.missing_kinds, &at)?;
    let mut settings = Settings::default();
    if let Some(group) = &suite.settings.break_glass_group {
        settings.break_glass_group = group.clone();
    }
    Ok(Prepared {
        dir,
        policies: Arc::new(ArcSwap::from_pointee(policies)),
        objects,
        missing,
        settings,
        suite,
    })
}

fn kinds(
    names: &[crate::policy::model::Located<String>],
    at: &dyn Fn(u32, u32, String) -> String,
) -> Result<Vec<crate::cluster::Kind>, String> {
    names
        .iter()
        .map(|n| {
            cluster::parse_kind(&n.value).ok_or_else(|| {
                at(
                    n.line,
                    n.column,
                    format!(
                        "unknown kind `{}`; one of {}",
                        n.value,
                        crate::cluster::Kind::ALL.map(|k| k.name()).join(", ")
                    ),
                )
            })
        })
        .collect()
}

async fn run_case(prepared: &Prepared, case: &Case, line: u32) -> CaseReport {
    let started = Instant::now();
    let mut report = CaseReport {
        name: case.name.clone(),
        line,
        failures: Vec::new(),
        observed: None,
        seconds: 0.0,
    };
    match observe(prepared, case).await {
        Ok(observed) => {
            report.failures = check(&case.expect, &observed);
            report.observed = Some(observed);
        }
        Err(err) => report.failures.push(err),
    }
    report.seconds = started.elapsed().as_secs_f64();
    report
}

async fn observe(prepared: &Prepared, case: &Case) -> Result<Observed, String> {
    let file = prepared.suite.metadata.name.as_str();
    let at = |line: u32, column: u32, reason: String| format!("line {line}:{column}: {reason}");
    let mut missing = prepared.missing.clone();
    missing.extend(kinds(&case.missing_kinds, &at)?);
    let mut objects = prepared.objects.clone();
    objects.extend(case.objects.iter().cloned());
    let view = cluster::snapshot(&objects, prepared.suite.cluster.all_kinds_known, &missing)?;
    let uid = build::request_uid(&format!("{file}/{}", case.name));
    let review = match build::shorthand(case, &objects, &uid)? {
        Some(review) => review,
        None => {
            let path = prepared
                .dir
                .join(case.review.as_deref().unwrap_or_default());
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut review: Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            if case.dry_run
                && let Some(request) = review.get_mut("request").and_then(Value::as_object_mut)
            {
                request.insert("dryRun".into(), true.into());
            }
            review
        }
    };
    let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
    let engine = Engine::new(
        prepared.policies.clone(),
        Arc::new(view),
        Arc::new(NoopRecorder),
        prepared.settings.clone(),
    );
    let admitted = engine
        .admit(&body, Endpoint::Validate)
        .await
        .map_err(|e| format!("the engine rejected the review: {e}"))?;
    let response: Value = serde_json::from_slice(&admitted.body)
        .map_err(|e| format!("the engine's response is not JSON: {e}"))?;
    let response = &response["response"];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let allowed = response["allowed"].as_bool().unwrap_or(false);
    let mut denying: Vec<String> = if allowed {
        Vec::new()
    } else {
        admitted
            .decision
            .policies_with(Action::Deny)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    denying.sort();
    denying.dedup();
    Ok(Observed {
        intent: admitted.intent.kind.name().to_string(),
        allowed,
        denying_policies: denying,
        message: response["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        warnings: strings(&response["warnings"]),
        recorded: admitted.record.is_some(),
        break_glass: admitted.decision.break_glass.is_some(),
    })
}
