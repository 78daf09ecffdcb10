//! What the shipped monitoring queries (deploy/monitoring/rules.yaml and
//! dashboard.json) ask for, and what a scrape offers: shared by
//! tests/monitoring_names.rs (a running `forcegate serve`) and
//! tests/e2e/monitoring.rs (live forcegate, the API server, kube-state-metrics).

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use promql_parser::parser::{self, Expr};
use promql_parser::util::{ExprVisitor, walk_expr};
use serde_json::Value;

/// Names Prometheus itself writes for every target; nothing else exports them.
pub const PROMETHEUS_OWN: &[&str] = &["up"];

/// Queried forcegate names that have series only with a live cluster, or
/// only on the verifier leader: tests/e2e/monitoring.rs requires their
/// series, tests/monitoring_names.rs everyone else's.
pub const LIVE_ONLY: &[&str] = &[
    "forcegate_forcedeletions",
    "forcegate_forcedeletions_oldest_created_timestamp_seconds",
    "forcegate_cluster_last_event_age_seconds",
];

pub fn monitoring_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/monitoring")
}

pub fn read(file: &str) -> String {
    let path = monitoring_dir().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

pub fn yaml(file: &str) -> Value {
    serde_saphyr::from_str(&read(file)).unwrap_or_else(|err| panic!("{file}: {err}"))
}

/// Every rule's expression in rules.yaml, as (`alert` or `record` name, expr).
pub fn rule_exprs() -> Vec<(String, String)> {
    let rules = yaml("rules.yaml");
    let mut exprs = Vec::new();
    for group in rules["groups"].as_array().expect("rules.yaml: groups") {
        for rule in group["rules"].as_array().expect("rules.yaml: rules") {
            let name = rule["alert"].as_str().or(rule["record"].as_str());
            let expr = rule["expr"].as_str();
            let (Some(name), Some(expr)) = (name, expr) else {
                panic!("rules.yaml: a rule without a name or an expr: {rule}");
            };
            exprs.push((format!("rule {name}"), expr.to_owned()));
        }
    }
    exprs
}

/// Every panel target's expression in dashboard.json (rows included), as
/// (panel title, expr), with Grafana's interval variables replaced by
/// durations so the text is plain PromQL.
pub fn dashboard_exprs() -> Vec<(String, String)> {
    let dashboard: Value =
        serde_json::from_str(&read("dashboard.json")).expect("dashboard.json is JSON");
    let mut exprs = Vec::new();
    let mut panels: Vec<&Value> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .collect();
    while let Some(panel) = panels.pop() {
        if let Some(nested) = panel["panels"].as_array() {
            panels.extend(nested);
        }
        for target in panel["targets"].as_array().into_iter().flatten() {
            let title = panel["title"].as_str().unwrap_or("(untitled)");
            let expr = target["expr"].as_str().expect("a target without expr");
            exprs.push((format!("panel {title:?}"), grafana_to_promql(expr)));
        }
    }
    exprs
}

fn grafana_to_promql(expr: &str) -> String {
    expr.replace("$__rate_interval", "5m")
        .replace("$__interval", "1m")
        .replace("$__range", "1h")
}

/// Metric name -> where it is used, over the rules and the dashboard.
/// Panics on an expression that is not PromQL.
pub fn used_metric_names() -> BTreeMap<String, Vec<String>> {
    let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (place, expr) in rule_exprs().into_iter().chain(dashboard_exprs()) {
        for name in metric_names(&expr).unwrap_or_else(|err| panic!("{place}: {err}\n{expr}")) {
            used.entry(name).or_default().push(place.clone());
        }
    }
    used
}

/// The metric names an expression selects.
pub fn metric_names(expr: &str) -> Result<Vec<String>, String> {
    struct Names(Vec<String>);
    impl ExprVisitor for Names {
        type Error = String;
        fn pre_visit(&mut self, expr: &Expr) -> Result<bool, String> {
            let selector = match expr {
                Expr::VectorSelector(vs) => vs,
                Expr::MatrixSelector(ms) => &ms.vs,
                _ => return Ok(true),
            };
            match &selector.name {
                Some(name) => self.0.push(name.clone()),
                None => return Err("a selector without a metric name".into()),
            }
            Ok(true)
        }
    }
    let parsed = parser::parse(expr)?;
    let mut names = Names(Vec::new());
    walk_expr(&mut names, &parsed)?;
    Ok(names.0)
}

/// The families (`# TYPE` lines) and sample names of one text exposition,
/// OpenMetrics (forcegate) or Prometheus 0.0.4 (Go exporters).
#[derive(Debug, Default)]
pub struct Scrape {
    types: HashMap<String, String>,
    samples: HashSet<String>,
    /// OpenMetrics (ends in `# EOF`): a counter family's samples are
    /// `<family>_total`. In the older format the family is the sample name.
    openmetrics: bool,
}

impl Scrape {
    pub fn parse(text: &str) -> Scrape {
        let mut scrape = Scrape::default();
        for line in text.lines() {
            if line == "# EOF" {
                scrape.openmetrics = true;
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let mut parts = rest.split_whitespace();
                if let (Some(name), Some(kind)) = (parts.next(), parts.next()) {
                    scrape.types.insert(name.to_owned(), kind.to_owned());
                }
            } else if !line.starts_with('#') && !line.trim().is_empty() {
                let end = line.find(['{', ' ']).unwrap_or(line.len());
                scrape.samples.insert(line[..end].to_owned());
            }
        }
        scrape
    }

    /// The family that exports `name`: its `# TYPE` line names the family
    /// and its type allows the suffix (a counter's `_total`, a histogram's
    /// `_bucket`/`_sum`/`_count`, an info's `_info`).
    pub fn family_of(&self, name: &str) -> Option<&str> {
        const SUFFIXES: &[(&str, &[&str])] = &[
            ("", &["gauge", "counter", "untyped", "unknown", "stateset"]),
            ("_total", &["counter"]),
            ("_bucket", &["histogram", "gaugehistogram"]),
            ("_sum", &["histogram", "summary"]),
            ("_count", &["histogram", "summary"]),
            ("_info", &["info"]),
        ];
        SUFFIXES.iter().find_map(|(suffix, kinds)| {
            let family = name.strip_suffix(suffix)?;
            let (family, kind) = self.types.get_key_value(family)?;
            let bare_counter = suffix.is_empty() && kind == "counter" && self.openmetrics;
            (kinds.contains(&kind.as_str()) && !bare_counter).then_some(family.as_str())
        })
    }

    /// At least one sample of `name` is in the scrape.
    pub fn has_samples(&self, name: &str) -> bool {
        self.samples.contains(name)
    }

    pub fn family_count(&self) -> usize {
        self.types.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_selectors_only() {
        let names = metric_names(
            r#"sum by (kind) (rate(a_total{job="x"}[5m])) / on (kind) b unless c{phase="d_total"} > 1"#,
        )
        .expect("parses");
        assert_eq!(names, ["a_total", "b", "c"]);
        assert!(metric_names("sum(rate(a[5m]").is_err());
    }

    #[test]
    fn families_resolve_by_type_and_suffix() {
        let scrape = Scrape::parse(
            "# TYPE fg_requests counter\nfg_requests_total{a=\"b\"} 1\n\
             # TYPE fg_duration_seconds histogram\nfg_duration_seconds_bucket{le=\"1\"} 0\n\
             # TYPE fg_stale gauge\n# EOF\n",
        );
        assert_eq!(scrape.family_of("fg_requests_total"), Some("fg_requests"));
        assert_eq!(scrape.family_of("fg_requests"), None);
        assert_eq!(
            scrape.family_of("fg_duration_seconds_bucket"),
            Some("fg_duration_seconds")
        );
        assert_eq!(scrape.family_of("fg_duration_seconds_total"), None);
        assert_eq!(scrape.family_of("fg_stale"), Some("fg_stale"));
        assert_eq!(scrape.family_of("fg_stale_total"), None);
        assert_eq!(scrape.family_of("fg_missing"), None);
        assert!(scrape.has_samples("fg_requests_total"));
        assert!(!scrape.has_samples("fg_stale"));
        let go = Scrape::parse("# TYPE go_count counter\ngo_count{a=\"b\"} 3\n");
        assert_eq!(go.family_of("go_count"), Some("go_count"));
    }
}
