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
    let found = check(&GOOD.replace("      equals: true", "      equals: true\n      bogus: 1"));
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

/// `kubectl get forcedeletionpolicies -o yaml`: a `List` whose items carry
/// server metadata and a status. They lint as written, with locations in
/// the file.
#[test]
fn lists_as_kubectl_prints_them() {
    let item = |name: &str, fact: &str| {
        format!(
            "\
- apiVersion: forcegate.dev/v1alpha1
  kind: ForceDeletionPolicy
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: '{{}}'
    creationTimestamp: \"2025-01-01T00:00:00Z\"
    generation: 2
    name: {name}
    resourceVersion: \"812\"
    uid: 5f0c1c8e-0000-4000-8000-000000000001
  spec:
    match:
      intents: [ForceDelete]
    conditions:
      - fact: {fact}
        equals: true
    action: Deny
    message: denied
  status:
    observedGeneration: 2
    conditions:
    - type: Ready
      status: \"True\"
"
        )
    };
    let list = format!(
        "apiVersion: v1\nitems:\n{}{}kind: List\nmetadata:\n  resourceVersion: \"\"\n",
        item("first", "node.ready"),
        item("second", "node.fenced")
    );
    let (policies, findings) = check_text(Path::new("live.yaml"), &list);
    assert!(findings.is_empty(), "{findings:?}");
    let names: Vec<&str> = policies.iter().map(|p| &*p.name).collect();
    assert_eq!(names, ["first", "second"]);

    let broken = list.replacen("node.fenced", "node.fencd", 1);
    let found = check(&broken);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("p.yaml:40:15: unknown fact `node.fencd`"),
        "{found:?}"
    );

    // A List of something else, and Lists mixed with policies, are named.
    let pods = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n";
    assert_eq!(
        check(pods),
        ["p.yaml:5:9: kind must be `ForceDeletionPolicy`, not `Pod`"]
    );
    let mixed = format!("{GOOD}---\n{list}");
    let found = check(&mixed);
    assert!(
        found[0].contains("either ForceDeletionPolicy documents or `List`s"),
        "{found:?}"
    );
}

#[test]
fn server_metadata_is_read_but_a_misspelled_field_is_not() {
    let fetched = GOOD.replace(
        "  name: node-alive\n",
        "  name: node-alive\n  uid: abc\n  generation: 3\n  resourceVersion: \"1\"\n",
    );
    assert!(check(&fetched).is_empty());
    let typo = GOOD.replace("  name: node-alive\n", "  name: node-alive\n  lables: {}\n");
    let found = check(&typo);
    assert!(found[0].contains("unknown field `lables`"), "{found:?}");
}
