//! Evaluator tests over hand-built facts and realistic requests.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::cluster::Unknown;
use crate::decision::Action;
use crate::facts::{LeaderFacts, NodeFacts, OwnerFacts, PodFacts};
use crate::intent::{IntentKind, ObjectRef, Requester};

const BREAK_GLASS_GROUP: &str = "forcegate:break-glass";

const HEADER: &str = "apiVersion: forcegate.dev/v1alpha1\nkind: ForceDeletionPolicy\n";

fn set(yaml: &str) -> PolicySet {
    let (mut policies, findings) = load::check_text(Path::new("inline.yaml"), yaml);
    assert!(findings.is_empty(), "{findings:?}");
    policies.sort_by(|a, b| a.name.cmp(&b.name));
    PolicySet::new(policies, Vec::new())
}

fn policy(name: &str, body: &str) -> String {
    format!("{HEADER}metadata:\n  name: {name}\nspec:\n{body}")
}

const NODE_ALIVE: &str = "  match:
    intents: [ForceDelete, Eviction]
  conditions:
    - fact: node.ready
      equals: true
    - fact: node.fenced
      equals: false
  action: Deny
  message: node {{ facts.node.name }} is Ready
  remediation: run `kubectl delete pod {{ target.name }} -n {{ target.namespace }}` without --force
";

const LEADER: &str = "  match:
    intents: [ForceDelete]
  conditions:
    - fact: owners.statefulSet
      exists: true
    - fact: leader.isLeader
      equals: true
  action: Deny
  message: pod {{ target.name }} leads
";

const RECORD: &str = "  match:
    intents: [ForceDelete, Eviction]
  action: Record
  message: cleanup {{ record }} recorded
";

fn request(annotations: Option<serde_json::Value>) -> Request {
    let mut metadata = json!({"name": "web-0", "namespace": "shop", "uid": "0f0e-uid"});
    if let Some(a) = annotations {
        metadata["annotations"] = a;
    }
    serde_json::from_value(json!({
        "uid": "req-1",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "web-0",
        "namespace": "shop",
        "operation": "DELETE",
        "userInfo": {"username": "alice", "groups": ["oncall", "system:authenticated"]},
        "object": null,
        "oldObject": {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                      "spec": {"nodeName": "n1", "containers": []}},
        "dryRun": false,
        "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "gracePeriodSeconds": 0}
    }))
    .expect("request decodes")
}

fn intent(groups: &[&str], dry_run: bool) -> Intent {
    Intent {
        kind: IntentKind::ForceDelete {
            already_terminating: false,
        },
        target: ObjectRef {
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            namespace: Some("shop".into()),
            name: "web-0".into(),
            uid: Some("0f0e-uid".into()),
            ..Default::default()
        },
        requester: Requester {
            username: "alice".into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        },
        dry_run,
    }
}

fn facts(ready: bool, fenced: bool) -> Facts {
    Facts {
        identity: Some(crate::facts::IdentityFacts {
            uid: "0f0e-uid".into(),
        }),
        pod: Some(PodFacts {
            namespace: "shop".into(),
            name: "web-0".into(),
            uid: "0f0e-uid".into(),
            node_name: Some("n1".into()),
            ..Default::default()
        }),
        node: Some(NodeFacts {
            name: "n1".into(),
            exists: true,
            ready,
            fenced,
            ..Default::default()
        }),
        owners: Some(OwnerFacts::default()),
        leader: Some(LeaderFacts::default()),
        ..Default::default()
    }
}

fn input<'a>(
    intent: &'a Intent,
    facts: &'a Facts,
    request: &'a Request,
    break_glass_group: &'a str,
) -> EvalInput<'a> {
    EvalInput {
        intent,
        facts,
        request,
        break_glass_group,
        now: Timestamp::UNIX_EPOCH,
    }
}

fn decide(set: &PolicySet, intent: &Intent, facts: &Facts, request: &Request) -> Decision {
    set.evaluate(&input(intent, facts, request, BREAK_GLASS_GROUP))
}

#[test]
fn ready_node_denies_with_policy_fact_and_remedy() {
    let set = set(&policy("node-alive", NODE_ALIVE));
    let d = decide(
        &set,
        &intent(&["oncall"], false),
        &facts(true, false),
        &request(None),
    );
    assert!(!d.allowed);
    assert!(!d.record);
    assert_eq!(d.policies_with(Action::Deny), vec!["node-alive"]);
    assert!(
        d.message
            .contains("forcegate denied the force deletion of pod shop/web-0"),
        "{}",
        d.message
    );
    assert!(d.message.contains("- node-alive: node n1 is Ready (because facts.node.ready is true and facts.node.fenced is false)"), "{}", d.message);
    assert!(
        d.message
            .contains("Instead: run `kubectl delete pod web-0 -n shop` without --force"),
        "{}",
        d.message
    );
    assert!(
        d.message.contains("forcegate.dev/break-glass"),
        "{}",
        d.message
    );
    assert_eq!(d.audit_annotations["decision"], "denied");
    assert_eq!(d.audit_annotations["policies"], "node-alive=Deny");
    assert_eq!(d.audit_annotations["intent"], "ForceDelete");
    assert!(d.audit_annotations.keys().all(|k| !k.contains('/')));
}

#[test]
fn not_ready_or_fenced_node_is_allowed_and_recorded() {
    let yaml = format!(
        "{}---\n{}",
        policy("node-alive", NODE_ALIVE),
        policy("record", RECORD)
    );
    let set = set(&yaml);
    for f in [facts(false, false), facts(true, true)] {
        let d = decide(&set, &intent(&["oncall"], false), &f, &request(None));
        assert!(d.allowed);
        assert!(d.record);
        assert_eq!(
            d.warnings,
            vec!["forcegate record: cleanup fd-0f0e-uid recorded"]
        );
        assert_eq!(d.audit_annotations["decision"], "allowed");
    }
}

#[test]
fn most_severe_wins_and_warnings_survive_denial() {
    let warn = "  match:\n    intents: [ForceDelete]\n  action: Warn\n  message: careful\n";
    let yaml = [
        policy("node-alive", NODE_ALIVE),
        policy("record", RECORD),
        policy("warn", warn),
    ]
    .join("---\n");
    let set = set(&yaml);
    let d = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &request(None),
    );
    assert!(!d.allowed);
    assert!(!d.record);
    assert_eq!(d.outcomes.len(), 3);
    assert_eq!(d.warnings, vec!["forcegate warn: careful"]);
    assert_eq!(
        d.audit_annotations["policies"],
        "node-alive=Deny,record=Record,warn=Warn"
    );
}

#[test]
fn dry_run_is_still_denied_and_says_nothing_is_recorded() {
    let yaml = format!(
        "{}---\n{}",
        policy("node-alive", NODE_ALIVE),
        policy("record", RECORD)
    );
    let set = set(&yaml);
    let d = decide(
        &set,
        &intent(&[], true),
        &facts(true, false),
        &request(None),
    );
    assert!(!d.allowed);
    let d = decide(
        &set,
        &intent(&[], true),
        &facts(false, false),
        &request(None),
    );
    assert!(d.allowed);
    assert!(
        d.warnings[0].ends_with("(dry run: nothing recorded)"),
        "{:?}",
        d.warnings
    );
}

fn unknown_leader() -> Facts {
    let mut f = facts(false, false);
    f.leader = None;
    f.unknown.insert(
        "leader".into(),
        Unknown {
            kind: "Lease".into(),
            reason: "not in the snapshot".into(),
        },
    );
    f
}

#[test]
fn unknown_fact_applies_on_unknown_and_names_the_missing_data() {
    let set = set(&policy("statefulset-leader", LEADER));
    let mut f = unknown_leader();
    f.owners = Some(OwnerFacts {
        stateful_set: Some("web".into()),
        ..Default::default()
    });
    let d = decide(&set, &intent(&[], false), &f, &request(None));
    assert!(!d.allowed);
    assert!(d.outcomes[0].unknown);
    assert!(
        d.message
            .contains("facts.leader.isLeader (Lease: not in the snapshot)"),
        "{}",
        d.message
    );
    assert_eq!(
        d.audit_annotations["unknown-facts"],
        "facts.leader.isLeader (Lease: not in the snapshot)"
    );

    // Not a StatefulSet pod: the unknown lease cannot matter.
    let d = decide(&set, &intent(&[], false), &unknown_leader(), &request(None));
    assert!(d.allowed, "{}", d.message);
    assert!(d.outcomes.is_empty());
}

#[test]
fn on_unknown_ignore_and_warn() {
    let ignore = LEADER.replace("  action: Deny", "  onUnknown: Ignore\n  action: Deny");
    let warn = LEADER.replace("  action: Deny", "  onUnknown: Warn\n  action: Deny");
    let mut f = unknown_leader();
    f.owners = Some(OwnerFacts {
        stateful_set: Some("web".into()),
        ..Default::default()
    });
    let d = decide(
        &set(&policy("l", &ignore)),
        &intent(&[], false),
        &f,
        &request(None),
    );
    assert!(d.allowed && d.outcomes.is_empty());
    let d = decide(
        &set(&policy("l", &warn)),
        &intent(&[], false),
        &f,
        &request(None),
    );
    assert!(d.allowed);
    assert_eq!(d.outcomes[0].action, Action::Warn);
    assert!(
        d.warnings[0].contains("could not decide"),
        "{:?}",
        d.warnings
    );
}

#[test]
fn break_glass_member_is_allowed_with_warning_audit_and_record() {
    let set = set(&policy("node-alive", NODE_ALIVE));
    let annotated = request(Some(
        json!({"forcegate.dev/break-glass": "INC-4711 kubelet wedged"}),
    ));
    let d = decide(
        &set,
        &intent(&["oncall", "forcegate:break-glass"], false),
        &facts(true, false),
        &annotated,
    );
    assert!(d.allowed);
    assert!(d.record);
    assert_eq!(d.break_glass.as_deref(), Some("INC-4711 kubelet wedged"));
    assert_eq!(
        d.audit_annotations["break-glass"],
        "INC-4711 kubelet wedged"
    );
    assert_eq!(d.audit_annotations["break-glass-overrode"], "node-alive");
    assert_eq!(d.audit_annotations["decision"], "allowed-break-glass");
    assert!(
        d.warnings[0].contains("break-glass by alice"),
        "{:?}",
        d.warnings
    );
    assert!(d.message.is_empty());
}

#[test]
fn break_glass_non_member_is_still_denied_and_told_why() {
    let set = set(&policy("node-alive", NODE_ALIVE));
    let annotated = request(Some(json!({"forcegate.dev/break-glass": "INC-4711"})));
    let d = decide(
        &set,
        &intent(&["oncall"], false),
        &facts(true, false),
        &annotated,
    );
    assert!(!d.allowed);
    assert!(d.break_glass.is_none());
    assert!(
        d.message
            .contains("alice is not in group forcegate:break-glass"),
        "{}",
        d.message
    );
    assert_eq!(d.audit_annotations["break-glass-refused"], "alice");

    // An empty reason is no break-glass at all.
    let empty = request(Some(json!({"forcegate.dev/break-glass": "  "})));
    let d = decide(
        &set,
        &intent(&["forcegate:break-glass"], false),
        &facts(true, false),
        &empty,
    );
    assert!(!d.allowed);
}

#[test]
fn excluded_requesters_skip_the_policy() {
    let body = NODE_ALIVE.replace(
        "  conditions:",
        "  exclude:\n    groups: [platform-admins]\n  conditions:",
    );
    let set = set(&policy("node-alive", &body));
    let d = decide(
        &set,
        &intent(&["platform-admins"], false),
        &facts(true, false),
        &request(None),
    );
    assert!(d.allowed);
    let d = decide(
        &set,
        &intent(&["devs"], false),
        &facts(true, false),
        &request(None),
    );
    assert!(!d.allowed);
}

#[test]
fn rules_fire_independently_within_a_policy() {
    let body = "  match:
    intents: [ForceDelete]
  rules:
    - name: ready
      conditions:
        - fact: node.ready
          equals: true
      action: Deny
      message: ready
    - name: always
      action: Warn
      message: forced
";
    let other = "  match:
    intents: [ForceDelete]
  action: Warn
  message: heads-up
";
    let yaml = format!("{}---\n{}", policy("multi", body), policy("other", other));
    let set = set(&yaml);
    let d = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &request(None),
    );
    assert!(!d.allowed);
    assert_eq!(
        d.audit_annotations["policies"],
        "multi/ready=Deny,multi/always=Warn,other=Warn"
    );
    // The denying policy's own Warn rule is not repeated as a warning (its
    // denial explains it); another policy's warning still reaches kubectl.
    assert_eq!(d.warnings, vec!["forcegate other: heads-up"]);
}

#[test]
fn many_long_warnings_fit_the_api_server_limits() {
    let mut yaml = Vec::new();
    for i in 0..30 {
        let body = format!(
            "  match:\n    intents: [ForceDelete]\n  action: Warn\n  message: \"{i} {}\"\n",
            "w".repeat(300)
        );
        yaml.push(policy(&format!("warn-{i:02}"), &body));
    }
    let set = set(&yaml.join("---\n"));
    let d = decide(
        &set,
        &intent(&[], false),
        &facts(false, false),
        &request(None),
    );
    assert!(d.allowed);
    assert!(
        d.warnings
            .iter()
            .all(|w| w.chars().count() <= message::MAX_WARNING_RUNES)
    );
    assert!(d.warnings.iter().map(String::len).sum::<usize>() <= message::MAX_WARNINGS_BYTES);
    assert!(d.warnings.last().is_some_and(|w| w.contains("omitted")));
}

#[test]
fn evaluation_is_deterministic() {
    let yaml = format!(
        "{}---\n{}",
        policy("node-alive", NODE_ALIVE),
        policy("record", RECORD)
    );
    let set = set(&yaml);
    let a = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &request(None),
    );
    let b = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &request(None),
    );
    assert_eq!(a, b);
    let keys: Vec<&String> = a.audit_annotations.keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let _: BTreeMap<String, String> = a.audit_annotations;
}

#[test]
fn namespace_selector_without_labels_is_unknown() {
    let body = NODE_ALIVE.replace(
        "    intents: [ForceDelete, Eviction]\n",
        "    intents: [ForceDelete, Eviction]\n    namespaceSelector:\n      matchLabels: {env: prod}\n",
    );
    let set = set(&policy("node-alive", &body));
    let d = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &request(None),
    );
    assert!(!d.allowed);
    assert!(d.outcomes[0].unknown);
    assert!(d.message.contains("namespace labels"), "{}", d.message);
}

#[test]
fn request_paths_see_the_object() {
    let body = "  match:
    intents: [ForceDelete]
  conditions:
    - path: \"$.oldObject.metadata.annotations['team']\"
      equals: payments
  action: Deny
  message: ask {{ oldObject.metadata.annotations.team }} first
";
    let annotated = request(Some(json!({"team": "payments"})));
    let with_path = set(&policy("team", body));
    let d = decide(
        &with_path,
        &intent(&[], false),
        &facts(false, false),
        &annotated,
    );
    assert!(!d.allowed);
    assert!(d.message.contains("ask payments first"), "{}", d.message);

    let other_team = request(Some(json!({"team": "search"})));
    let d = decide(
        &with_path,
        &intent(&[], false),
        &facts(false, false),
        &other_team,
    );
    assert!(d.allowed, "{}", d.message);
}

/// What jsonpath-rust selects from the whole document `json`.
fn jsonpath(path: &str, json: &serde_json::Value) -> Vec<serde_json::Value> {
    let query = jsonpath_rust::parser::parse_json_path(path).expect(path);
    jsonpath_rust::query::js_path_process(&query, json)
        .expect(path)
        .into_iter()
        .map(|r| r.val.clone())
        .collect()
}

/// The values `path` selects in `context`.
fn select(context: &context::Context<'_>, path: &str) -> Vec<serde_json::Value> {
    let selection = condition::compile_path(path).expect(path);
    let (condition::Selection::Path { plan, .. } | condition::Selection::Fact { plan, .. }) =
        &selection;
    context.select(plan).into_iter().cloned().collect()
}

/// What `path` selects in a context built with only what it reads.
fn select_reading_only(input: &EvalInput<'_>, path: &str) -> Vec<serde_json::Value> {
    let selection = condition::compile_path(path).expect(path);
    let mut reads = Reads::default();
    reads.plan(selection.plan());
    select(&context::Context::new(input, &reads), path)
}

/// A context reads each root as its own JSON; whatever a path selects there
/// must be what jsonpath-rust selects in the whole document.
#[test]
fn context_selects_what_jsonpath_selects_in_its_document() {
    let mut annotated = request(Some(json!({"team": "payments", "a.b/c": "d"})));
    annotated.object = annotated.old_object.clone().map(|mut object| {
        object.metadata.name = Some("web-0-updated".into());
        object
    });
    let intent = intent(&["oncall"], false);
    let mut facts = facts(true, false);
    if let Some(pod) = facts.pod.as_mut() {
        pod.labels = BTreeMap::from([("role".to_owned(), "leader".to_owned())]);
    }
    let input = input(&intent, &facts, &annotated, BREAK_GLASS_GROUP);
    let all = Reads::all();
    let context = context::Context::new(&input, &all);
    let json = context.to_json();
    assert!(json["facts"]["node"]["ready"].as_bool().unwrap(), "{json}");
    let plain = context::Context::from_json(&json);
    let paths = [
        "$.facts.node.name",
        "$.facts.node.ready",
        "$.facts.pod",
        "$.facts.pod.labels['role']",
        "$.facts.leader.leases[*].name",
        "$.facts.node.nothing",
        "$.target.name",
        "$.target",
        "$.intent.type",
        "$.intent.alreadyTerminating",
        "$.intent.removedFinalizers",
        "$.requester.groups[0]",
        "$.requester",
        "$.request.operation",
        "$.request.oldObject.metadata.name",
        "$.request.userInfo.groups[*]",
        "$.oldObject.metadata.annotations['a.b/c']",
        "$.oldObject.spec",
        "$.object.metadata.annotations.team",
        "$.object.metadata.name",
        "$.settings.breakGlassGroup",
        "$.record",
        "$.now",
        "$.target.nothing",
        "$[*].name",
        "$..uid",
        "$.requester.groups[?@ == 'oncall']",
        "$.facts.pod.labels[?@ == 'leader']",
        "$.facts.node[?@ == 'n1']",
        "$.request.userInfo.groups[1:]",
    ];
    // Every fact group, whole and one level in.
    let groups: Vec<String> = json["facts"]
        .as_object()
        .expect("facts is an object")
        .keys()
        .filter(|group| *group != "unknown")
        .flat_map(|group| [format!("$.facts.{group}"), format!("$.facts.{group}[*]")])
        .chain(["$.facts".into(), "$.facts[*]".into()])
        .collect();
    assert!(groups.len() >= 2 * 10, "{groups:?}");
    for path in paths
        .iter()
        .copied()
        .chain(groups.iter().map(String::as_str))
    {
        let got = select(&context, path);
        assert_eq!(got, jsonpath(path, &json), "{path}");
        assert_eq!(got, select(&plain, path), "{path}");
        assert_eq!(got, select_reading_only(&input, path), "{path}");
        if paths.contains(&path)
            && ![
                "$.facts.node.nothing",
                "$.target.nothing",
                "$.facts.leader.leases[*].name",
            ]
            .contains(&path)
        {
            assert!(
                !got.is_empty(),
                "{path} selects nothing: the test would prove little"
            );
        }
    }
}

/// A root is turned into JSON only when a path reads it.
#[test]
fn context_builds_only_the_roots_read() {
    let request = request(None);
    let intent = intent(&[], false);
    let facts = facts(true, false);
    let input = input(&intent, &facts, &request, BREAK_GLASS_GROUP);
    let all = Reads::all();
    let context = context::Context::new(&input, &all);
    assert_eq!(context.built(), []);
    assert_eq!(select(&context, "$.facts.node.ready"), [json!(true)]);
    assert_eq!(select(&context, "$.target.name"), [json!("web-0")]);
    assert_eq!(context.built(), [path::Root::Facts, path::Root::Target]);
    select(&context, "$..nothing");
    assert_eq!(context.built().len(), path::Root::ALL.len());
}

/// Every path into the context (each root, member and element, with `[*]`,
/// a missing name and an index past the end) selects what jsonpath-rust
/// selects in the whole document, and a template hole shows it as it shows
/// the document's JSON, for each kind of gated intent.
#[test]
fn every_path_of_the_context_selects_what_jsonpath_selects() {
    let request = request(Some(json!({"team": "payments"})));
    let facts = facts(true, false);
    let kinds = [
        IntentKind::ForceDelete {
            already_terminating: true,
        },
        IntentKind::Eviction,
        IntentKind::FinalizerRemoval {
            removed: vec!["a.io/x".into(), "b.io/y".into()],
            deleting: true,
        },
        IntentKind::NamespaceFinalize {
            removed: vec!["kubernetes".into()],
        },
    ];
    for kind in kinds {
        let intent = Intent {
            kind,
            ..intent(&["oncall", "dev"], true)
        };
        let input = input(&intent, &facts, &request, BREAK_GLASS_GROUP);
        let all = Reads::all();
        let context = context::Context::new(&input, &all);
        let json = context.to_json();
        let plain = context::Context::from_json(&json);
        let mut selecting = 0;
        let mut rendered = 0;
        for path in every_path(&json) {
            // Outside the context (`$['absent']`): rejected when loading.
            if condition::compile_path(&path).is_err() {
                continue;
            }
            let got = select(&context, &path);
            assert_eq!(got, jsonpath(&path, &json), "{:?}: {path}", intent.kind);
            selecting += usize::from(!got.is_empty());
            let projected = select_reading_only(&input, &path);
            assert_eq!(projected, got, "{:?}: {path}", intent.kind);
            let Ok(template) = message::Template::parse(&format!("{{{{ {path} }}}}")) else {
                continue;
            };
            let render = |context| {
                template.render(&condition::Scope {
                    context,
                    unknown: &BTreeMap::new(),
                })
            };
            let text = render(&context);
            assert_eq!(text, render(&plain), "{:?}: {path}", intent.kind);
            rendered += usize::from(text != message::ABSENT);
        }
        assert!(selecting > 150, "{:?}: {selecting}", intent.kind);
        assert!(rendered > 150, "{:?}: {rendered}", intent.kind);
    }
}

/// Every path to every node of `json` (`$['facts']['pod'][0]`); each also
/// with `[*]`, a missing name and an index past the end after it, and with
/// all its indexes turned into `[*]`.
fn every_path(json: &serde_json::Value) -> Vec<String> {
    fn visit(value: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        out.push(at.to_owned());
        for extra in ["[*]", "['absent']", "[7]"] {
            out.push(format!("{at}{extra}"));
        }
        match value {
            serde_json::Value::Object(map) => map
                .iter()
                .for_each(|(key, v)| visit(v, &format!("{at}['{key}']"), out)),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, v)| visit(v, &format!("{at}[{i}]"), out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    visit(json, "$", &mut out);
    let index = regex::Regex::new(r"\[[0-9]+\]").expect("pattern compiles");
    let wildcards: Vec<String> = out
        .iter()
        .filter(|path| index.is_match(path))
        .map(|path| index.replace_all(path, "[*]").into_owned())
        .collect();
    out.extend(wildcards);
    out
}

#[test]
fn endpoints_are_needed_only_by_a_set_that_reads_them() {
    let shipped = PolicySet::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("policies"))
        .expect("shipped policies load");
    assert!(!shipped.needs().endpoints);
    assert!(!set(&policy("node-alive", NODE_ALIVE)).needs().endpoints);
    assert!(!PolicySet::default().needs().endpoints);

    let reads = |body: &str| set(&policy("reads", body)).needs().endpoints;
    let condition = "  match:\n    intents: [ForceDelete]\n  conditions:\n    - fact: endpoints.referenced\n      equals: true\n  action: Warn\n  message: still served\n";
    assert!(reads(condition));
    let path = "  match:\n    intents: [ForceDelete]\n  conditions:\n    - path: $.facts.endpoints.slices[0]\n      exists: true\n  action: Warn\n  message: still served\n";
    assert!(reads(path));
    let hole = "  match:\n    intents: [ForceDelete]\n  action: Warn\n  message: served by {{ facts.endpoints.slices }}\n";
    assert!(reads(hole));
    let remediation = "  match:\n    intents: [ForceDelete]\n  action: Deny\n  message: no\n  remediation: see {{ facts.endpoints.slices | default \"none\" }}\n";
    assert!(reads(remediation));
    // A path over the whole document or all facts may read any group.
    let everything =
        "  match:\n    intents: [ForceDelete]\n  action: Warn\n  message: uids {{ $..uid }}\n";
    assert!(reads(everything));
    let all_facts =
        "  match:\n    intents: [ForceDelete]\n  action: Warn\n  message: facts {{ facts[*] }}\n";
    assert!(reads(all_facts));
    // A path into the request only does not.
    let request_only = "  match:\n    intents: [ForceDelete]\n  action: Warn\n  message: by {{ request.userInfo.username }}\n";
    assert!(!reads(request_only));
}

/// How each kind of request is named at the head of a denial.
#[test]
fn requests_are_described_by_intent_kind_and_target() {
    let pod = intent(&[], false);
    let with = |kind: IntentKind, target: ObjectRef| Intent {
        kind,
        target,
        ..pod.clone()
    };
    let claim = ObjectRef {
        kind: "PersistentVolumeClaim".into(),
        resource: "persistentvolumeclaims".into(),
        namespace: Some("data".into()),
        name: "minio".into(),
        ..Default::default()
    };
    let volume = ObjectRef {
        kind: "PersistentVolume".into(),
        resource: "persistentvolumes".into(),
        namespace: Some(String::new()),
        name: "pv-1".into(),
        ..Default::default()
    };
    let eviction = ObjectRef {
        kind: "Eviction".into(),
        resource: "pods".into(),
        subresource: Some("eviction".into()),
        ..pod.target.clone()
    };
    let namespace = ObjectRef {
        kind: String::new(),
        resource: "namespaces".into(),
        namespace: None,
        name: "shop".into(),
        ..Default::default()
    };
    let removal = |removed: &[&str]| IntentKind::FinalizerRemoval {
        removed: removed.iter().map(|f| f.to_string()).collect(),
        deleting: true,
    };
    let cases = [
        (pod.clone(), "the force deletion of pod shop/web-0"),
        (
            with(IntentKind::Eviction, eviction.clone()),
            "the grace-0 eviction of pod shop/web-0",
        ),
        (
            with(removal(&["kubernetes.io/pvc-protection"]), claim.clone()),
            "the removal of finalizer kubernetes.io/pvc-protection from persistentvolumeclaim data/minio",
        ),
        (
            with(removal(&["a.io/x", "b.io/y"]), volume),
            "the removal of finalizers a.io/x, b.io/y from persistentvolume pv-1",
        ),
        (
            with(
                IntentKind::NamespaceFinalize {
                    removed: vec!["kubernetes".into()],
                },
                namespace,
            ),
            "the force-finalize of namespace shop",
        ),
        (
            with(
                IntentKind::NotGated {
                    reason: "graceful".into(),
                },
                eviction,
            ),
            "this request on pod shop/web-0",
        ),
        (
            with(
                IntentKind::NotGated {
                    reason: "graceful".into(),
                },
                claim,
            ),
            "this request on persistentvolumeclaim data/minio",
        ),
    ];
    for (intent, expected) in cases {
        assert_eq!(describe_request(&intent), expected, "{:?}", intent.kind);
    }
}

/// A label selector reads labels no condition names: the set's reads
/// include them, so the context it evaluates in has them.
#[test]
fn label_selectors_see_the_labels_through_the_set() {
    let body = NODE_ALIVE.replace(
        "    intents: [ForceDelete, Eviction]\n",
        "    intents: [ForceDelete, Eviction]\n    objectSelector:\n      matchLabels: {app: web}\n",
    );
    let set = set(&policy("node-alive", &body));
    let labelled = |app: &str| {
        let mut request = request(None);
        if let Some(old) = request.old_object.as_mut() {
            old.metadata.labels = Some(BTreeMap::from([("app".to_owned(), app.to_owned())]));
        }
        request
    };
    let web = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &labelled("web"),
    );
    assert!(!web.allowed, "{}", web.message);
    let api = decide(
        &set,
        &intent(&[], false),
        &facts(true, false),
        &labelled("api"),
    );
    assert!(api.allowed, "{}", api.message);

    // An eviction reads the pod's labels from the facts.
    let mut eviction = Intent {
        kind: IntentKind::Eviction,
        ..intent(&[], false)
    };
    eviction.target.subresource = Some("eviction".into());
    let mut facts = facts(true, false);
    if let Some(pod) = facts.pod.as_mut() {
        pod.labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
    }
    let evicted = decide(&set, &eviction, &facts, &request(None));
    assert!(!evicted.allowed, "{}", evicted.message);
    assert!(!evicted.outcomes[0].unknown, "{}", evicted.message);
}
