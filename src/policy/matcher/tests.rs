//! Matcher tests: webhook-rule semantics, exclusions, selectors, locations.

use super::patterns::glob_match;
use super::*;
use crate::intent::{IntentKind, ObjectRef, Requester};
use serde_json::json;
use std::path::Path;

fn intent(resource: &str, subresource: Option<&str>, ns: &str, user: &str) -> Intent {
    Intent {
        kind: IntentKind::ForceDelete {
            already_terminating: false,
        },
        target: ObjectRef {
            version: "v1".into(),
            kind: "Pod".into(),
            resource: resource.into(),
            subresource: subresource.map(str::to_string),
            namespace: Some(ns.into()),
            name: "web-0".into(),
            ..Default::default()
        },
        requester: Requester {
            username: user.into(),
            groups: vec!["system:authenticated".into()],
        },
        dry_run: false,
    }
}

fn matcher(yaml: &str) -> Matcher {
    #[derive(serde::Deserialize)]
    struct Both {
        #[serde(rename = "match")]
        m: Located<model::Match>,
        #[serde(default)]
        exclude: model::Exclude,
    }
    let both: Both = serde_saphyr::from_str(yaml).expect("yaml");
    let mut problems = Problems::new(Path::new("t.yaml"));
    let m = compile(&both.m, &both.exclude, &mut problems);
    assert!(problems.len() == 0, "{:?}", problems.into_findings());
    m
}

fn applies(m: &Matcher, intent: &Intent, ctx: &Value) -> super::super::condition::Truth {
    let unknown = BTreeMap::new();
    m.applies(
        intent,
        &Scope {
            context: &crate::policy::context::Context::from_json(ctx),
            unknown: &unknown,
        },
    )
    .truth
}

use super::super::condition::Truth;

#[test]
fn resources_follow_webhook_rule_semantics() {
    let ctx = json!({});
    let pods = intent("pods", None, "shop", "alice");
    let evict = intent("pods", Some("eviction"), "shop", "alice");
    let m = matcher("match:\n  intents: [ForceDelete]\n  resources: [pods]\n");
    assert_eq!(applies(&m, &pods, &ctx), Truth::True);
    assert_eq!(applies(&m, &evict, &ctx), Truth::False);
    let m = matcher("match:\n  intents: [ForceDelete]\n  resources: ['pods/*']\n");
    assert_eq!(applies(&m, &pods, &ctx), Truth::False);
    assert_eq!(applies(&m, &evict, &ctx), Truth::True);
    let m = matcher("match:\n  intents: [ForceDelete]\n  resources: [jobs.batch]\n");
    assert_eq!(applies(&m, &pods, &ctx), Truth::False);
}

#[test]
fn intents_namespaces_and_exclusions() {
    let ctx = json!({});
    let m = matcher("match:\n  intents: [Eviction]\n");
    assert_eq!(
        applies(&m, &intent("pods", None, "shop", "alice"), &ctx),
        Truth::False
    );
    let m = matcher(
        "match:\n  intents: [ForceDelete]\n  namespaces: ['team-*']\nexclude:\n  users: [bob]\n  serviceAccounts: [ops/*]\n",
    );
    assert_eq!(
        applies(&m, &intent("pods", None, "team-a", "alice"), &ctx),
        Truth::True
    );
    assert_eq!(
        applies(&m, &intent("pods", None, "shop", "alice"), &ctx),
        Truth::False
    );
    assert_eq!(
        applies(&m, &intent("pods", None, "team-a", "bob"), &ctx),
        Truth::False
    );
    assert_eq!(
        applies(
            &m,
            &intent("pods", None, "team-a", "system:serviceaccount:ops:cleaner"),
            &ctx
        ),
        Truth::False
    );
    assert_eq!(
        applies(
            &m,
            &intent("pods", None, "team-a", "system:serviceaccount:dev:cleaner"),
            &ctx
        ),
        Truth::True
    );
}

#[test]
fn selectors_read_object_or_facts() {
    let m = matcher(
        "match:\n  intents: [ForceDelete]\n  objectSelector:\n    matchExpressions:\n      - {key: tier, operator: In, values: [db]}\n",
    );
    let pod = intent("pods", None, "shop", "alice");
    let ctx = json!({"oldObject": {"metadata": {"labels": {"tier": "db"}}}, "object": null});
    assert_eq!(applies(&m, &pod, &ctx), Truth::True);
    let ctx = json!({"oldObject": {"metadata": {"labels": {"tier": "web"}}}});
    assert_eq!(applies(&m, &pod, &ctx), Truth::False);
    let evict = intent("pods", Some("eviction"), "shop", "alice");
    let ctx = json!({"object": {"metadata": {"name": "web-0"}}, "facts": {"pod": {"labels": {"tier": "db"}}}});
    assert_eq!(applies(&m, &evict, &ctx), Truth::True);

    let m = matcher(
        "match:\n  intents: [ForceDelete]\n  namespaceSelector:\n    matchLabels: {env: prod}\n",
    );
    assert_eq!(applies(&m, &pod, &json!({})), Truth::Unknown);
    let ctx = json!({"facts": {"namespace": {"labels": {"env": "prod"}}}});
    assert_eq!(applies(&m, &pod, &ctx), Truth::True);
}

#[test]
fn compile_reports_bad_input() {
    #[derive(serde::Deserialize)]
    struct Only {
        #[serde(rename = "match")]
        m: Located<model::Match>,
    }
    let only: Only = serde_saphyr::from_str(
        "match:\n  intents: [ForceDelete, SystemFinalization, Evict]\n  resources: [Pods]\n",
    )
    .expect("yaml");
    let mut problems = Problems::new(Path::new("t.yaml"));
    compile(&only.m, &model::Exclude::default(), &mut problems);
    let found: Vec<String> = problems
        .into_findings()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found[0].starts_with("t.yaml:2:26: intent `SystemFinalization` never reaches"),
        "{found:?}"
    );
    assert!(found[1].starts_with("t.yaml:2:46: unknown intent `Evict`"));
    assert!(found[2].starts_with("t.yaml:3:15: invalid resource `Pods`"));
}

#[test]
fn globs() {
    assert!(glob_match(b"team-*", b"team-a"));
    assert!(glob_match(b"*", b""));
    assert!(!glob_match(b"team-*", b"teams"));
    assert!(glob_match(b"a*b*c", b"axxbyyc"));
}
