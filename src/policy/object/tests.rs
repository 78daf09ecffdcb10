use serde_json::json;

use super::*;

fn object(spec: Value) -> Value {
    json!({
        "apiVersion": "forcegate.dev/v1alpha1",
        "kind": "ForceDeletionPolicy",
        "metadata": {
            "name": "p",
            "uid": "0000",
            "generation": 4,
            "managedFields": [{"manager": "kubectl"}],
            "labels": {"app.kubernetes.io/part-of": "forcegate"},
        },
        "spec": spec,
        "status": {"observedGeneration": 3},
    })
}

fn problems(spec: Value) -> Vec<String> {
    match compile(&object(spec)) {
        Ok(policy) => panic!("{} compiled", policy.name),
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_good_object_compiles_whatever_the_server_added() {
    let policy = compile(&object(json!({
        "match": {"intents": ["ForceDelete"]},
        "conditions": [{"fact": "node.ready", "equals": true}],
        "action": "Deny",
        "message": "node {{ facts.node.name }} is Ready",
    })))
    .expect("compiles");
    assert_eq!(&*policy.name, "p");
    assert_eq!(policy.file, PathBuf::from("forcedeletionpolicy/p"));
}

#[test]
fn problems_are_named_by_field_path() {
    let found = problems(json!({
        "match": {"intents": ["ForceDelete", "Evict"]},
        "rules": [
            {"name": "ok", "action": "Warn", "message": "fine"},
            {
                "name": "bad",
                "conditions": [
                    {"fact": "node.ready", "equals": true},
                    {"path": "$.facts[?", "exists": true},
                ],
                "action": "Deny",
                "message": "{{ facts.node.name",
            },
        ],
    }));
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found[0].starts_with("spec.match.intents[1]: unknown intent `Evict`"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("spec.rules[1].conditions[1].path: "),
        "{found:?}"
    );
    assert!(
        found[2].starts_with("spec.rules[1].message: in template"),
        "{found:?}"
    );
}

#[test]
fn shape_errors_name_the_field_too() {
    let found = problems(json!({
        "match": {"intents": ["ForceDelete"]},
        "conditions": [{"fact": "node.ready", "equals": true, "bogus": 1}],
        "action": "Deny",
        "message": "m",
    }));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("spec.conditions[0].bogus: unknown field `bogus`"),
        "{found:?}"
    );
    let found = problems(Value::Null);
    assert!(found[0].starts_with("spec: "), "{found:?}");
}

#[test]
fn every_line_of_pretty_json_has_its_field() {
    let value = json!({"a": {"b": [1, {"c": []}], "d.e": {}}, "f": "x"});
    let text = serde_json::to_string_pretty(&value).expect("json");
    let fields = line_fields(&value);
    assert_eq!(text.lines().count(), fields.len(), "{text}");
    let pairs: Vec<(&str, &str)> = text
        .lines()
        .map(str::trim)
        .zip(fields.iter().map(String::as_str))
        .collect();
    assert_eq!(
        pairs,
        [
            ("{", ""),
            ("\"a\": {", "a"),
            ("\"b\": [", "a.b"),
            ("1,", "a.b[0]"),
            ("{", "a.b[1]"),
            ("\"c\": []", "a.b[1].c"),
            ("}", "a.b[1]"),
            ("],", "a.b"),
            ("\"d.e\": {}", "a[d.e]"),
            ("},", "a"),
            ("\"f\": \"x\"", "f"),
            ("}", ""),
        ]
    );
}
