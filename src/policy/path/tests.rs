//! Every plan must select what jsonpath-rust selects on the whole document.

use serde_json::{Value, json};

use super::{Plan, Root, Selected, Step};

fn doc() -> Value {
    json!({
        "facts": {
            "node": {"name": "n1", "ready": true, "heartbeatAgeSeconds": 12.5},
            "pod": null,
            "labels": {"role": "leader", "app": "db", "b": "x", "a.b/c": "y"},
            "leases": [
                {"name": "db-leader", "holders": ["db-0", "db-0_x"]},
                {"name": "other", "holders": []},
            ],
            "counts": {"Pod": 3, "Secret": 1},
        },
        "intent": {"type": "FinalizerRemoval", "removed": ["a/b"], "deleting": true},
        "object": {"k": [1, {"m": null}], "byNumber": {"10": "ten", "2": "two"}},
        "record": "fd-1",
        "now": "2024-01-01T00:00:00Z",
    })
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
    "$.object.k[1].m",
    "$.object.k[*]",
    "$.intent.type",
    "$.intent.removed[0]",
    "$.intent[*]",
    "$.object.byNumber['10']",
    "$.object.byNumber[*]",
    "$.record",
    "$.now",
    "$.requester.username",
];

/// Paths jsonpath-rust runs, from a root or on the whole document.
const GENERAL_PATHS: &[&str] = &[
    "$.facts.leases[?@.name == 'other'].name",
    "$.facts.leases[?@.holders[0] == 'db-0'].name",
    "$.facts.leases[-1].name",
    "$.facts.leases[0:1].holders[*]",
    "$.facts.labels[?@ == 'db']",
    "$.facts.missing[?@.a]",
    "$..name",
    "$.facts.leases[?@.name == $.facts.node.name]",
    "$.facts.leases[?@.name != 'other'].holders[*]",
    "$.facts.leases[?'other' == @.name]",
    "$.facts.leases[?@.missing == null]",
    "$.facts[?@.ready == true].name",
    "$.facts.counts[?@ == 3.0]",
    "$.facts.counts[?@ != 3]",
    "$.facts.node[?@ == 12.5]",
    "$.facts.leases[*].holders[?@ == 'db-0']",
    "$.object.k[?@.m == null]",
    "$.facts.leases[?@.name == 'other' && @.holders[0] == 'x']",
    "$['facts','intent'].type",
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

fn select(plan: &Plan, doc: &Value) -> Vec<Value> {
    let mut out = Selected::new();
    plan.select(|root| doc.get(root.name()), || doc, &mut out);
    out.into_iter().cloned().collect()
}

#[test]
fn every_plan_selects_what_jsonpath_selects_on_the_document() {
    let doc = doc();
    let mut non_empty = 0;
    for path in PATHS.iter().chain(GENERAL_PATHS) {
        let found = select(&plan(path), &doc);
        assert_eq!(found, jsonpath(path, &doc), "{path}");
        non_empty += usize::from(!found.is_empty());
    }
    // Most paths select something, so the comparison is not vacuous.
    assert!(non_empty >= 40, "{non_empty}");
}

#[test]
fn plans_walk_what_they_can() {
    for path in [
        "$..name",
        "$[?@.b == 1]",
        "$.facts.leases[?@.name == $.x]",
        "$.unknown.x",
        "$",
    ] {
        assert!(matches!(plan(path), Plan::Whole(_)), "{path}");
    }
    for path in [
        "$.facts.leases[?@.name == 'other'].name",
        "$.facts.leases[1:2]",
        "$.facts.leases[-1]",
        "$.facts['leases','node']",
    ] {
        assert!(
            matches!(
                plan(path),
                Plan::Query {
                    root: Root::Facts,
                    ..
                }
            ),
            "{path}"
        );
    }
    let Plan::Walk { root, steps } = plan("$.facts.leases[*].name") else {
        panic!("a simple path is walked");
    };
    assert_eq!(root, Root::Facts);
    assert_eq!(
        steps,
        vec![
            Step::Key("leases".into()),
            Step::All,
            Step::Key("name".into()),
        ]
    );
    assert!(matches!(
        Plan::names(&["oldObject", "metadata", "labels"]),
        Plan::Walk {
            root: Root::OldObject,
            ..
        }
    ));
}

#[test]
fn roots_are_named_as_the_document_names_them() {
    for root in Root::ALL {
        assert_eq!(Root::named(root.name()), Some(root));
    }
    assert_eq!(
        Root::list(),
        "request, object, oldObject, facts, intent, target, requester, record, settings, now"
    );
}
