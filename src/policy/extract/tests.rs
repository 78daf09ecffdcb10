//! Every selection must equal what jsonpath-rust selects from the JSON.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::{Value, json};

use super::{Plan, Rest, Step, select, walk};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Doc {
    facts: Facts,
    #[serde(flatten)]
    extra: BTreeMap<String, Value>,
    kind: Kind,
    shape: Shape,
    tuple: (u8, &'static str),
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
    by_number: BTreeMap<u32, &'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Facts {
    node: Option<Node>,
    pod: Option<Node>,
    labels: HashMap<String, String>,
    leases: Vec<Lease>,
    counts: BTreeMap<String, u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Node {
    name: String,
    ready: bool,
    heartbeat_age_seconds: Option<f64>,
}

#[derive(Serialize)]
struct Lease {
    name: String,
    holders: Vec<String>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Kind {
    FinalizerRemoval {
        removed: Vec<String>,
        deleting: bool,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Shape {
    Point(i32, i32),
    Named { x: i32, y: Option<i32> },
    Boxed(Node),
}

fn doc() -> Doc {
    Doc {
        facts: Facts {
            node: Some(Node {
                name: "n1".into(),
                ready: true,
                heartbeat_age_seconds: Some(12.5),
            }),
            pod: None,
            labels: [
                ("role", "leader"),
                ("app", "db"),
                ("b", "x"),
                ("a.b/c", "y"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            leases: vec![
                Lease {
                    name: "db-leader".into(),
                    holders: vec!["db-0".into(), "db-0_x".into()],
                },
                Lease {
                    name: "other".into(),
                    holders: vec![],
                },
            ],
            counts: [("Pod".to_string(), 3), ("Secret".to_string(), 1)]
                .into_iter()
                .collect(),
        },
        extra: [("zeta".to_string(), json!({"k": [1, {"m": null}]}))]
            .into_iter()
            .collect(),
        kind: Kind::FinalizerRemoval {
            removed: vec!["a/b".into()],
            deleting: true,
        },
        shape: Shape::Named { x: 1, y: None },
        tuple: (7, "seven"),
        skipped: None,
        by_number: [(10, "ten"), (2, "two")].into_iter().collect(),
    }
}

const PATHS: &[&str] = &[
    "$",
    "$.facts",
    "$.facts.node.name",
    "$.facts.node.ready",
    "$.facts.node.heartbeatAgeSeconds",
    "$.facts.node.missing",
    "$.facts.node.name.deeper",
    "$.facts.pod",
    "$.facts.pod.name",
    "$.facts.labels",
    "$.facts.labels['role']",
    "$.facts.labels['a.b/c']",
    "$.facts.labels[*]",
    "$.facts.labels[0]",
    "$.facts.leases[*].name",
    "$.facts.leases[0].name",
    "$.facts.leases[1].holders[*]",
    "$.facts.leases[*].holders[*]",
    "$.facts.leases[5].name",
    "$.facts.leases.name",
    "$.facts.counts[*]",
    "$.facts[*]",
    "$.facts.node[*]",
    "$[*]",
    "$.zeta.k[1].m",
    "$.zeta.k[*]",
    "$.kind.type",
    "$.kind.removed[0]",
    "$.kind[*]",
    "$.shape.named.x",
    "$.shape.named.y",
    "$.shape[*].x",
    "$.tuple[1]",
    "$.tuple[*]",
    "$.skipped",
    "$.byNumber['10']",
    "$.by_number['10']",
    "$.by_number[*]",
];

fn jsonpath(path: &str, value: &Value) -> Vec<Value> {
    let query = jsonpath_rust::parser::parse_json_path(path).expect("path parses");
    jsonpath_rust::query::js_path_process(&query, value)
        .expect("query runs")
        .into_iter()
        .map(|r| r.val.clone())
        .collect()
}

fn plan(path: &str) -> Plan {
    Plan::new(jsonpath_rust::parser::parse_json_path(path).expect("path parses"))
}

fn steps(path: &str) -> Vec<Step> {
    match plan(path) {
        Plan::Walk(steps) => steps,
        other => panic!("{path} is not walkable: {other:?}"),
    }
}

#[test]
fn typed_selection_matches_jsonpath_on_the_json() {
    let doc = doc();
    let json = serde_json::to_value(&doc).unwrap();
    let mut non_empty = 0;
    for path in PATHS {
        let mut typed = Vec::new();
        select(&doc, &steps(path), &mut typed);
        assert_eq!(typed, jsonpath(path, &json), "{path}");
        non_empty += usize::from(!typed.is_empty());
    }
    // Most paths select something, so the comparison is not vacuous.
    assert!(non_empty >= 25, "{non_empty}");
}

/// Paths the walk cannot take alone, run by the plan over typed values.
const GENERAL_PATHS: &[&str] = &[
    "$.facts.leases[?@.name == 'other'].name",
    "$.facts.leases[?@.holders[0] == 'db-0'].name",
    "$.facts.leases[-1].name",
    "$.facts.leases[0:1].holders[*]",
    "$.facts.labels[?@ == 'db']",
    "$.facts.missing[?@.a]",
    "$..name",
    "$.facts.leases[?@.name == $.facts.node.name]",
    // Equality filters, walked without the engine: both sides, negated,
    // numbers by value, missing values, filters over map values, nested.
    "$.facts.leases[?@.name != 'other'].holders[*]",
    "$.facts.leases[?'other' == @.name]",
    "$.facts.leases[?@.holders[1] != 'db-0_x'].name",
    "$.facts.leases[?@.missing == null]",
    "$.facts.leases[?@.missing != null].name",
    "$.facts[?@.ready == true].name",
    "$.facts.counts[?@ == 3.0]",
    "$.facts.counts[?@ != 3]",
    "$.facts.node[?@ == 12.5]",
    "$.facts.leases[*].holders[?@ == 'db-0']",
    "$.facts.leases[0][?@ == 'db-leader']",
    "$.zeta.k[?@.m == null]",
    "$.facts.leases[?@.holders[-1] == 'db-0_x'].name",
    "$.facts.leases[?@.name == 'other' && @.holders[0] == 'x']",
];

#[test]
fn every_plan_matches_jsonpath() {
    let doc = doc();
    let json = serde_json::to_value(&doc).unwrap();
    let mut non_empty = 0;
    for path in PATHS.iter().chain(GENERAL_PATHS) {
        let found = super::run(&plan(path), &doc, || &json);
        assert_eq!(found, jsonpath(path, &json), "{path}");
        non_empty += usize::from(!found.is_empty());
    }
    assert!(non_empty >= 40, "{non_empty}");
}

#[test]
fn json_walk_matches_jsonpath() {
    let json = serde_json::to_value(doc()).unwrap();
    for path in PATHS {
        let mut walked = Vec::new();
        walk(&json, &steps(path), &mut walked);
        let walked: Vec<Value> = walked.into_iter().cloned().collect();
        assert_eq!(walked, jsonpath(path, &json), "{path}");
    }
}

#[test]
fn selects_inside_enum_variants() {
    let doc = doc();
    let mut found = Vec::new();
    select(&doc, &steps("$.shape.named.x"), &mut found);
    assert_eq!(found, vec![json!(1)]);
    let boxed = Shape::Boxed(Node {
        name: "n".into(),
        ready: false,
        heartbeat_age_seconds: None,
    });
    let mut found = Vec::new();
    select(&boxed, &steps("$.boxed.name"), &mut found);
    assert_eq!(found, vec![json!("n")]);
    let point = Shape::Point(3, 4);
    let mut found = Vec::new();
    select(&point, &steps("$.point[1]"), &mut found);
    assert_eq!(found, vec![json!(4)]);
}

#[test]
fn plans_walk_what_they_can() {
    for path in ["$..name", "$[?@.b == 1]", "$.facts.leases[?@.name == $.x]"] {
        assert!(matches!(plan(path), Plan::Whole(_)), "{path}");
    }
    for (path, prefix) in [
        ("$.facts.leases[?@.name == 'other'].name", 2),
        ("$.facts.leases[1:2]", 2),
        ("$.facts.leases[-1]", 2),
        ("$.facts['leases','node']", 1),
        ("$.facts.leases[0].holders[*][?@ == 'x']", 4),
    ] {
        match plan(path) {
            Plan::Rooted { prefix: p, .. } => assert_eq!(p.len(), prefix, "{path}"),
            other => panic!("{path}: {other:?}"),
        }
    }
    // Equality against a literal on a relative path is walked here; other
    // filters (negative indexes, `&&`, tests, `$`) go to the engine.
    let walked = |path: &str| {
        matches!(
            plan(path),
            Plan::Rooted {
                rest: Rest::Walk(_),
                ..
            }
        )
    };
    assert!(walked(
        "$.facts.volumes.claims[?@.attachedOnPodNode == true].claim"
    ));
    assert!(walked("$.facts.leases[?'x' != @.holders[0]]"));
    assert!(walked("$.facts.leases[0].holders[*][?@ == 'x']"));
    for path in [
        "$.facts.leases[?@.holders[-1] == 'x']",
        "$.facts.leases[?@.name == 'a' && @.b == 1]",
        "$.facts.leases[?@.name > 'a']",
        "$.facts.missing[?@.a]",
        "$.facts.leases[1:2]",
    ] {
        assert!(
            matches!(
                plan(path),
                Plan::Rooted {
                    rest: Rest::Engine(_),
                    ..
                }
            ),
            "{path}"
        );
    }
    assert_eq!(
        steps("$.facts.leases[*].name"),
        vec![
            Step::Key("facts".into()),
            Step::Key("leases".into()),
            Step::All,
            Step::Key("name".into()),
        ]
    );
}
