use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// `manifests/policy-crd.yaml` is generated from the model, as
/// `policies/schema.json` is; regenerate both with
/// `FORCEGATE_UPDATE_SCHEMA=1 cargo test --lib policy::`.
#[test]
fn manifest_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/policy-crd.yaml");
    let generated = manifest().expect("the CRD generates");
    if std::env::var_os("FORCEGATE_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write manifests/policy-crd.yaml");
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "manifests/policy-crd.yaml is stale; regenerate with FORCEGATE_UPDATE_SCHEMA=1 cargo test --lib policy::"
    );
}

/// What a schema says about one field, in either dialect.
#[derive(Debug, PartialEq)]
enum Shape {
    /// Type, enum values (sorted) and required properties.
    Typed(String, Vec<String>, BTreeSet<String>),
    /// Any value: JSON Schema's `true`, the CRD's unpruned field (also
    /// where the CRD stops following a recursive condition).
    Any,
}

/// Every field path below `schema` with its shape. `root` resolves
/// `$ref`s (schema.json); a type already on the way down stops there.
fn shapes(
    schema: &Value,
    root: &Value,
    path: &str,
    seen: &mut Vec<String>,
    out: &mut BTreeMap<String, Shape>,
) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if seen.iter().any(|s| s == reference) {
            out.insert(path.to_owned(), Shape::Any);
            return;
        }
        let target = root
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("unresolved {reference}"));
        seen.push(reference.to_owned());
        shapes(target, root, path, seen, out);
        seen.pop();
        return;
    }
    // `anyOf: [X, null]` is an optional X; `oneOf` of constants an enum.
    for key in ["anyOf", "oneOf"] {
        let Some(variants) = schema.get(key).and_then(Value::as_array) else {
            continue;
        };
        let real: Vec<&Value> = variants
            .iter()
            .filter(|v| v.get("type") != Some(&json!("null")))
            .collect();
        if let [only] = real.as_slice() {
            return shapes(only, root, path, seen, out);
        }
        let mut values: Vec<String> = real
            .iter()
            .flat_map(|v| {
                let one = v.get("const").into_iter();
                one.chain(
                    v.get("enum")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten(),
                )
            })
            .map(|v| v.to_string())
            .collect();
        values.sort();
        out.insert(
            path.to_owned(),
            Shape::Typed("string".into(), values, BTreeSet::new()),
        );
        return;
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_owned),
        _ => None,
    };
    let open = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    let Some(ty) = ty.filter(|_| !(open && schema.get("properties").is_none())) else {
        out.insert(path.to_owned(), Shape::Any);
        return;
    };
    let mut values: Vec<String> = schema
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(Value::to_string)
        .collect();
    values.sort();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    out.insert(path.to_owned(), Shape::Typed(ty, values, required));
    for (name, child) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        shapes(child, root, &format!("{path}.{name}"), seen, out);
    }
    if let Some(items) = schema.get("items") {
        shapes(items, root, &format!("{path}[]"), seen, out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        shapes(values, root, &format!("{path}{{}}"), seen, out);
    }
}

/// The CRD and `policies/schema.json` describe the same spec: the same
/// fields, types, enums and required fields, down to where the CRD stops
/// following nested conditions (the loader checks those).
#[test]
fn crd_schema_agrees_with_the_policy_schema() {
    let file = serde_json::to_value(super::super::model::schema()).expect("schema");
    let mut expected = BTreeMap::new();
    let spec = file
        .pointer("/properties/spec")
        .expect("spec in schema.json");
    shapes(spec, &file, "spec", &mut Vec::new(), &mut expected);

    let crd = serde_json::to_value(definition().expect("crd")).expect("crd json");
    let root = crd
        .pointer("/spec/versions/0/schema/openAPIV3Schema")
        .expect("openAPIV3Schema")
        .clone();
    let mut found = BTreeMap::new();
    let spec = root.pointer("/properties/spec").expect("spec in the CRD");
    shapes(spec, &root, "spec", &mut Vec::new(), &mut found);

    assert!(found.len() > 40, "{found:?}");
    for (path, shape) in &found {
        match (shape, expected.get(path)) {
            (Shape::Any, Some(_)) => {}
            (shape, Some(want)) => assert_eq!(shape, want, "{path}"),
            (_, None) => panic!("the CRD has {path}, schema.json does not"),
        }
    }
    for path in expected.keys() {
        let cut = found
            .iter()
            .any(|(prefix, shape)| *shape == Shape::Any && path.starts_with(prefix.as_str()));
        assert!(
            found.contains_key(path) || cut,
            "schema.json has {path}, the CRD does not"
        );
    }
}

#[test]
fn the_crd_names_columns_and_status() {
    let crd = serde_json::to_value(definition().expect("crd")).expect("json");
    assert_eq!(
        crd["metadata"]["name"],
        "forcedeletionpolicies.forcegate.dev"
    );
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(crd["spec"]["names"]["shortNames"], json!(["fdp"]));
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["subresources"]["status"], json!({}));
    let columns: Vec<(&str, i64)> = version["additionalPrinterColumns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default(),
                c["priority"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Intents", 0),
            ("Action", 0),
            ("On-Unknown", 0),
            ("Ready", 0),
            ("Age", 0),
            ("Message", 1)
        ]
    );
    let schema = &version["schema"]["openAPIV3Schema"];
    let text = schema.to_string();
    for absent in [
        "$ref",
        "\"default\"",
        "\"title\"",
        "additionalProperties\":false",
    ] {
        assert!(!text.contains(absent), "the CRD schema holds {absent}");
    }
    let rules = schema["properties"]["spec"]["x-kubernetes-validations"].to_string();
    assert!(rules.contains("has(self.rules)"), "{rules}");
    assert!(
        schema["x-kubernetes-validations"][0]["rule"]
            .as_str()
            .is_some_and(|r| r.contains("self.metadata.name")),
        "{schema}"
    );
}
