//! Condition tests: operators, JSONPath, three-valued logic, locations.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::policy::catalog;
use crate::policy::error::Problems;
use crate::policy::model::{self, Located};

fn parse(yaml: &str) -> Result<Condition, Vec<String>> {
    let located: Located<model::Condition> =
        serde_saphyr::from_str(yaml).map_err(|e| vec![e.to_string()])?;
    let mut problems = Problems::new(std::path::Path::new("t.yaml"));
    let compiled = compile(&located, &mut problems);
    let findings: Vec<String> = problems
        .into_findings()
        .iter()
        .map(ToString::to_string)
        .collect();
    match compiled {
        Some(c) if findings.is_empty() => Ok(c),
        _ => Err(findings),
    }
}

fn eval(yaml: &str, context: &Value, unknown: &[(&str, &str)]) -> Verdict {
    let condition = parse(yaml).expect("condition compiles");
    let unknown: BTreeMap<String, String> = unknown
        .iter()
        .map(|(g, r)| (catalog::normalize_group(g), r.to_string()))
        .collect();
    let context = crate::policy::context::Context::from_json(context);
    let scope = Scope {
        context: &context,
        unknown: &unknown,
    };
    condition.eval(&scope)
}

fn ctx() -> Value {
    json!({
        "facts": {
            "node": {"name": "n1", "ready": true, "fenced": false, "heartbeatAgeSeconds": 12},
            "pod": {"labels": {"role": "leader", "app": "db"}, "claims": ["data-db-0"]},
            "owners": {"statefulSet": "db", "job": null},
        },
        "intent": {"type": "ForceDelete", "removedFinalizers": ["kubernetes.io/pvc-protection", "x/y"]},
        "requester": {"username": "alice", "groups": ["devs"]},
        "object": null,
    })
}

#[test]
fn fact_equals_and_witness() {
    let v = eval("fact: node.ready\nequals: true\n", &ctx(), &[]);
    assert_eq!(v.truth, Truth::True);
    assert_eq!(v.because, "facts.node.ready is true");
    let v = eval("fact: node.fenced\nequals: true\n", &ctx(), &[]);
    assert_eq!(v.truth, Truth::False);
}

#[test]
fn missing_values_satisfy_only_exists_false() {
    let c = ctx();
    assert_eq!(
        eval("fact: owners.job\nexists: true\n", &c, &[]).truth,
        Truth::False
    );
    assert_eq!(
        eval("fact: owners.job\nexists: false\n", &c, &[]).truth,
        Truth::True
    );
    assert_eq!(
        eval("fact: owners.job.name\nnotEquals: x\n", &c, &[]).truth,
        Truth::False
    );
    assert_eq!(
        eval("fact: owners.statefulSet\nnotEquals: web\n", &c, &[]).truth,
        Truth::True
    );
}

#[test]
fn jsonpath_selection_with_brackets() {
    let c = ctx();
    let v = eval(
        "path: \"$.facts.pod.labels['role']\"\nin: [leader, primary]\n",
        &c,
        &[],
    );
    assert_eq!(v.truth, Truth::True);
    assert_eq!(v.because, "$.facts.pod.labels['role'] is \"leader\"");
    let v = eval(
        "path: $.intent.removedFinalizers[*]\nmatches: ^kubernetes\\.io/\n",
        &c,
        &[],
    );
    assert_eq!(v.truth, Truth::True);
}

#[test]
fn numeric_and_list_operators() {
    let c = ctx();
    assert_eq!(
        eval("fact: node.heartbeatAgeSeconds\ngreaterThan: 10\n", &c, &[]).truth,
        Truth::True
    );
    assert_eq!(
        eval(
            "fact: node.heartbeatAgeSeconds\nlessThanOrEqual: 11\n",
            &c,
            &[]
        )
        .truth,
        Truth::False
    );
    assert_eq!(
        eval(
            "fact: intent.removedFinalizers\ncontains: kubernetes.io/pvc-protection\n",
            &c,
            &[]
        )
        .truth,
        Truth::True
    );
    assert_eq!(
        eval(
            "fact: intent.removedFinalizers\ncontainsAny: [orphan, foregroundDeletion]\n",
            &c,
            &[]
        )
        .truth,
        Truth::False
    );
    assert_eq!(
        eval(
            "fact: requester.username\nnotMatches: '^system:'\n",
            &c,
            &[]
        )
        .truth,
        Truth::True
    );
    assert_eq!(
        eval("fact: pod.labels\ncontains: role\n", &c, &[]).truth,
        Truth::True
    );
}

#[test]
fn three_valued_logic() {
    let c = ctx();
    let unknown = [("leader", "Lease: not in the snapshot")];
    let leaf = "fact: leader.isLeader\nequals: true\n";
    let v = eval(leaf, &c, &unknown);
    assert_eq!(v.truth, Truth::Unknown);
    assert_eq!(
        Missing::describe(&v.missing),
        "facts.leader.isLeader (Lease: not in the snapshot)"
    );
    // all: one false part decides regardless of the unknown one.
    let all = "all:\n  - fact: node.fenced\n    equals: true\n  - fact: leader.isLeader\n    equals: true\n";
    assert_eq!(eval(all, &c, &unknown).truth, Truth::False);
    // any: one true part decides.
    let any = "any:\n  - fact: leader.isLeader\n    equals: true\n  - path: \"$.facts.pod.labels['role']\"\n    equals: leader\n";
    assert_eq!(eval(any, &c, &unknown).truth, Truth::True);
    // not keeps unknown unknown.
    let not = "not:\n  fact: leader.isLeader\n  equals: true\n";
    assert_eq!(eval(not, &c, &unknown).truth, Truth::Unknown);
    // Request facts are never unknown.
    let v = eval(
        "fact: intent.type\nequals: ForceDelete\n",
        &c,
        &[("intent", "x")],
    );
    assert_eq!(v.truth, Truth::True);
    // A JSONPath into an unknown group is unknown too.
    let v = eval(
        "path: $.facts.leader.isLeader\nequals: true\n",
        &c,
        &unknown,
    );
    assert_eq!(v.truth, Truth::Unknown);
}

#[test]
fn explanations_compose_through_all_any_not() {
    let c = ctx();
    let unknown = [("leader", "Lease: not in the snapshot")];
    let nested = "all:
  - fact: node.ready
    equals: true
    description: the node is alive
  - any:
      - fact: leader.isLeader
        equals: true
      - path: \"$.facts.pod.labels['role']\"
        equals: leader
  - not:
      fact: node.fenced
      equals: true
";
    let v = eval(nested, &c, &unknown);
    assert_eq!(v.truth, Truth::True);
    assert_eq!(
        v.because,
        "the node is alive and $.facts.pod.labels['role'] is \"leader\" and not (facts.node.fenced equals true)"
    );
    assert!(v.missing.is_empty(), "a true `any` drops its unknown parts");
    // Unknown keeps what was missing and no half explanation.
    let all = "all:\n  - fact: node.ready\n    equals: true\n  - fact: leader.isLeader\n    equals: true\n";
    let v = eval(all, &c, &unknown);
    assert_eq!((v.truth, v.because.as_str()), (Truth::Unknown, ""));
    assert_eq!(
        Missing::describe(&v.missing),
        "facts.leader.isLeader (Lease: not in the snapshot)"
    );
    // A negative operator is explained by every value it saw.
    let v = eval("path: $.intent.removedFinalizers[*]\nnotIn: [a]\n", &c, &[]);
    assert_eq!(
        v.because,
        "$.intent.removedFinalizers[*] is \"kubernetes.io/pvc-protection\", is \"x/y\""
    );
    // Long values are cut to 77 characters.
    let long = json!({"facts": {"node": {"name": "n".repeat(100)}}});
    let v = eval("fact: node.name\nexists: true\n", &long, &[]);
    assert_eq!(
        v.because,
        format!("facts.node.name is \"{}…", "n".repeat(76))
    );
}

#[test]
fn description_replaces_generated_text() {
    let v = eval(
        "fact: node.ready\nequals: true\ndescription: the node is alive\n",
        &ctx(),
        &[],
    );
    assert_eq!(v.because, "the node is alive");
}

#[test]
fn rejects_with_locations() {
    let err = parse("fact: node.redy\nequals: true\n").unwrap_err();
    assert_eq!(
        err,
        vec![
            "t.yaml:1:7: unknown fact `node.redy` (did you mean `node.ready`?); see docs/policies.md for the list"
        ]
    );
    let err = parse("fact: node.ready\nequals: \"true\"\n").unwrap_err();
    assert!(err[0].contains("is a boolean"), "{err:?}");
    let err = parse("path: $.object[\nexists: true\n").unwrap_err();
    assert_eq!(
        err[0],
        "t.yaml:1:7: invalid JSONPath `$.object[`: expected selector at column 10"
    );
    let err = parse("path: $.objekt.metadata\nexists: true\n").unwrap_err();
    assert!(err[0].contains("not in the evaluation context"), "{err:?}");
    let err = parse("path: $.facts.nodes.ready\nexists: true\n").unwrap_err();
    assert!(err[0].contains("unknown fact group `nodes`"), "{err:?}");
    let err = parse("fact: pod.name\nmatches: \"(\"\n").unwrap_err();
    assert!(
        err[0].starts_with("t.yaml:2:10: invalid regular expression"),
        "{err:?}"
    );
    let err = parse("fact: pod.name\nequals: a\nin: [b]\n").unwrap_err();
    assert!(err[0].contains("exactly one operator"), "{err:?}");
    let err = parse("fact: pod.name\n").unwrap_err();
    assert!(err[0].contains("found none"), "{err:?}");
    let err = parse("all: []\n").unwrap_err();
    assert!(err[0].contains("at least one"), "{err:?}");
    let err = parse("fact: node.ready\npath: $.x\nequals: 1\n").unwrap_err();
    assert!(err[0].contains("exactly one of"), "{err:?}");
    let err = parse("fact: node.ready\ngreaterThan: 1\n").unwrap_err();
    assert!(err[0].contains("numeric comparison"), "{err:?}");
}

#[test]
fn numbers_compare_by_value() {
    assert!(json_eq(&json!(1), &json!(1.0)));
    assert!(!json_eq(&json!(1), &json!("1")));
}

/// Number equality has one meaning: an operator's is a JSONPath filter's.
#[test]
fn numbers_compare_as_jsonpath_filters_compare_them() {
    let numbers = [
        json!(0),
        json!(-0.0),
        json!(1),
        json!(1.0),
        json!(-1),
        json!(12.5),
        json!(0.1 + 0.2),
        json!(0.3),
        json!(1e-17),
        json!(2e-17),
        // The largest integers a JSONPath literal may hold (I-JSON).
        json!((1_i64 << 53) - 1),
        json!((1_i64 << 53) - 2),
        json!(-(1_i64 << 53) + 1),
        json!(1e300),
    ];
    let (mut equal, mut unequal) = (0, 0);
    for a in &numbers {
        for b in &numbers {
            let query = jsonpath_rust::parser::parse_json_path(&format!("$[?@ == {b}]"))
                .expect("filter parses");
            let doc = json!([a]);
            let filtered = jsonpath_rust::query::js_path_process(&query, &doc)
                .expect("filter runs")
                .len();
            assert_eq!(json_eq(a, b), filtered == 1, "{a} == {b}");
            let condition = format!("path: $.object.n\nequals: {b}\n");
            let truth = eval(&condition, &json!({"object": {"n": a}}), &[]).truth;
            assert_eq!(truth == Truth::True, filtered == 1, "{a} equals {b}");
            if filtered == 1 {
                equal += 1
            } else {
                unequal += 1
            }
        }
    }
    // Both outcomes occur, beyond the diagonal: 1 and 1.0, 0.1 + 0.2 and 0.3.
    assert!(equal > numbers.len() + 4, "{equal}");
    assert!(unequal > 100, "{unequal}");
}

proptest::proptest! {
    /// Strings and flags, written without the formatter, read as the
    /// formatter writes them: JSON, cut to 80 runes with an ellipsis.
    #[test]
    fn compact_values_are_short_json(text in "[a-z]{70,90}|[ -~é\u{0}-\u{1f}\u{7f}]{0,90}|\\PC{0,100}", flag: bool) {
        for value in [json!(text), json!(flag)] {
            let json = value.to_string();
            let expected = if json.chars().count() <= 80 {
                json
            } else {
                json.chars().take(77).chain(['…']).collect()
            };
            proptest::prop_assert_eq!(operator::compact(&value), expected);
        }
    }
}
