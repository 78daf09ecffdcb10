//! ForceDeletionPolicy objects on the real API server: the shipped
//! policies installed by kustomize and in force, bad policies refused at
//! apply (by forcegate's webhook with the field and the reason, by the
//! API server's own schema), edits and deletions in force within 2 s, and
//! PermissionsGranted naming what forcegate may not read.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by};
use crate::harness::{Harness, POD_NAME, harness};
use crate::kubectl::{Run, eventually};

const POLICY_WEBHOOK: &str = "policies.forcegate.dev";
const FORCE_DELETE_WEBHOOK: &str = "force-delete.pods.forcegate.dev";
/// How long status may take: the writer's debounce, a watch round trip.
const STATUS_TIMEOUT: Duration = Duration::from_secs(30);

/// A policy denying (or `action`) force deletes in `namespace` only.
pub fn scoped_policy(name: &str, namespace: &str, action: &str, conditions: Value) -> Value {
    json!({
        "apiVersion": "forcegate.dev/v1alpha1",
        "kind": "ForceDeletionPolicy",
        "metadata": {"name": name},
        "spec": {
            "match": {"intents": ["ForceDelete"], "namespaces": [namespace]},
            "conditions": conditions,
            "action": action,
            "message": format!("held by {name}"),
        },
    })
}

pub fn apply(h: &Harness, object: &Value) -> Run {
    h.admin
        .run_stdin(&["apply", "-f", "-"], &object.to_string())
}

/// The policy's condition `type`, once its status is about `generation`.
pub fn condition(h: &Harness, name: &str, type_: &str) -> Result<(Value, Value), String> {
    let object = h
        .admin
        .get(&["forcedeletionpolicy", name])
        .ok_or_else(|| format!("no policy {name}"))?;
    let generation = &object["metadata"]["generation"];
    if &object["status"]["observedGeneration"] != generation {
        return Err(format!(
            "status not about generation {generation} yet: {object}"
        ));
    }
    let found = status_condition(&object, type_)
        .cloned()
        .ok_or_else(|| format!("no {type_} condition: {object}"))?;
    Ok((found, object))
}

/// The condition of `type_` in a policy object's status, if any.
fn status_condition<'o>(object: &'o Value, type_: &str) -> Option<&'o Value> {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
}

fn delete_policy(h: &Harness, name: &str) {
    h.admin
        .ok(&["delete", "forcedeletionpolicy", name, "--ignore-not-found"]);
}

/// The names of the shipped policies (the files `policies/Kustomization`
/// lists).
fn shipped(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("policies"))
        .expect("policies/")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".yaml")?;
            (!stem.ends_with("_test")).then(|| stem.to_owned())
        })
        .collect();
    names.sort();
    names
}

#[test]
fn shipped_policies_are_objects_in_force_with_their_columns() {
    let h = harness();
    let _running = h.shared();
    let dir = h.root.join("policies");
    let run = h
        .admin
        .run(&["apply", "-k", dir.to_str().expect("UTF-8 path")]);
    assert!(run.success(), "{}", run.describe());
    let names = shipped(&h.root);
    assert_eq!(names.len(), 7, "{names:?}");
    for name in &names {
        assert!(
            run.stdout
                .contains(&format!("forcedeletionpolicy.forcegate.dev/{name}")),
            "{}",
            run.describe()
        );
    }

    let table = eventually("every shipped policy Ready", STATUS_TIMEOUT, || {
        let table = h.admin.ok(&["get", "fdp"]);
        let ready = names.iter().all(|name| {
            table
                .lines()
                .any(|l| l.starts_with(&format!("{name} ")) && l.contains(" True "))
        });
        if ready { Ok(table) } else { Err(table) }
    });
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "INTENTS", "ACTION", "ON-UNKNOWN", "READY", "AGE"],
        "{table}"
    );
    let node_alive = table
        .lines()
        .find(|l| l.starts_with("node-alive "))
        .expect("node-alive row");
    let cells: Vec<&str> = node_alive.split_whitespace().collect();
    assert_eq!(
        cells[1..5],
        ["ForceDelete,Eviction", "Deny", "Deny", "True"],
        "{table}"
    );
    let wide = h.admin.ok(&["get", "fdp", "node-alive", "-o", "wide"]);
    assert!(
        wide.lines().next().unwrap_or_default().ends_with("MESSAGE"),
        "{wide}"
    );
    assert!(wide.contains("in force on"), "{wide}");

    let (ready, object) = condition(h, "node-alive", "Ready").expect("Ready");
    assert_eq!(ready["status"], "True", "{object}");
    let replicas = object["status"]["replicas"].as_array().expect("replicas");
    assert!(
        replicas
            .iter()
            .any(|r| r["name"] == POD_NAME && r["generation"] == object["metadata"]["generation"]),
        "{object}"
    );

    // What the cluster holds lints as written (a List, with status).
    let fetched = h.admin.ok(&["get", "fdp", "-o", "yaml"]);
    let file = h.work.join("fetched-policies.yaml");
    std::fs::write(&file, fetched).expect("write");
    let lint = std::process::Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .arg("lint")
        .arg(&file)
        .output()
        .expect("forcegate lint runs");
    let stderr = String::from_utf8_lossy(&lint.stderr);
    assert!(
        lint.status.success(),
        "{stderr}{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    assert!(stderr.contains(" 0 problems"), "{stderr}");
}

#[test]
fn a_bad_policy_is_refused_at_apply_with_the_field_and_the_reason() {
    let h = harness();
    let _running = h.shared();
    let bad_path = scoped_policy(
        "e2e-bad-path",
        "e2e-none",
        "Deny",
        json!([{"path": "$.facts.pod.labels[", "exists": true}]),
    );
    let run = apply(h, &bad_path);
    assert!(!run.success(), "{}", run.describe());
    for expected in [
        &format!("admission webhook \"{POLICY_WEBHOOK}\" denied the request"),
        "ForceDeletionPolicy e2e-bad-path is invalid",
        "spec.conditions[0].path: ",
    ] {
        assert!(
            run.stderr.contains(expected),
            "expected {expected:?}:\n{}",
            run.describe()
        );
    }
    assert!(h.admin.get(&["fdp", "e2e-bad-path"]).is_none());

    // A template hole that cannot resolve, and an unknown fact nested where
    // the CRD does not look: the loader's findings, by field.
    let nested = scoped_policy(
        "e2e-bad-nested",
        "e2e-none",
        "Deny",
        json!([{"any": [{"fact": "node.redy", "equals": true}]}]),
    );
    let run = apply(h, &nested);
    assert!(
        run.stderr
            .contains("spec.conditions[0].any[0].fact: unknown fact `node.redy`"),
        "{}",
        run.describe()
    );
    let mut hole = scoped_policy("e2e-bad-hole", "e2e-none", "Deny", json!([]));
    hole["spec"]["message"] = json!("node {{ facts.nod.name }} is Ready");
    let run = apply(h, &hole);
    assert!(run.stderr.contains("spec.message: "), "{}", run.describe());

    // The API server's own schema: an unknown intent, a rule form mix-up.
    let mut intent = scoped_policy("e2e-bad-intent", "e2e-none", "Deny", json!([]));
    intent["spec"]["match"]["intents"] = json!(["ForceDelet"]);
    let run = apply(h, &intent);
    assert!(
        !run.success()
            && run
                .stderr
                .contains("spec.match.intents[0]: Unsupported value: \"ForceDelet\""),
        "{}",
        run.describe()
    );
    let mut both = scoped_policy("e2e-bad-form", "e2e-none", "Deny", json!([]));
    both["spec"]["rules"] = json!([{"name": "r", "action": "Warn", "message": "m"}]);
    let run = apply(h, &both);
    assert!(
        !run.success() && run.stderr.contains("use either `rules` or one inline rule"),
        "{}",
        run.describe()
    );
}

#[test]
fn an_edit_is_in_force_within_two_seconds_and_a_deletion_removes_it() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "policy-edit");
    // Not Ready, not fenced, owned by nothing: no shipped policy denies.
    let node = scene.node("n1", NodeState::Unreachable);
    scene.running_pod("a", &node, PodSpec::default());
    // Not the namespace's name: other warnings name the namespace.
    let name = "e2e-edited";
    let policy = scoped_policy(name, &scene.ns, "Deny", json!([]));
    let force = [
        "delete",
        "pod",
        "a",
        "--force",
        "--grace-period=0",
        "--dry-run=server",
    ];
    let run = apply(h, &policy);
    assert!(run.success(), "{}", run.describe());
    scene.until_forcegate_sees(&force, |run| denied_by(run, FORCE_DELETE_WEBHOOK, name));

    let warned = |run: &Run| {
        run.success()
            && run
                .stderr
                .contains(&format!("forcegate {name}: held by {name}"))
    };
    let patch = r#"{"spec":{"action":"Warn"}}"#;
    h.admin
        .ok(&["patch", "fdp", name, "--type=merge", "-p", patch]);
    in_force_within_two_seconds(&scene, &force, "Deny → Warn", warned);
    h.admin.ok(&["delete", "fdp", name]);
    in_force_within_two_seconds(&scene, &force, "the deletion", |run| {
        run.success() && !run.stderr.contains(&format!("forcegate {name}:"))
    });
}

/// Run `args` in the scene until `done`, which must hold within 2 s of
/// the API server accepting the change (the caller's last call).
fn in_force_within_two_seconds(
    scene: &Scene,
    args: &[&str],
    what: &str,
    done: impl Fn(&Run) -> bool,
) {
    let accepted = Instant::now();
    let all: Vec<&str> = ["-n", scene.ns.as_str()]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    let run = eventually(&format!("{what} in force"), Duration::from_secs(10), || {
        let run = scene.k().run(&all);
        if done(&run) {
            Ok(run)
        } else {
            Err(run.describe())
        }
    });
    eprintln!("e2e: {what} in force after {:?}", accepted.elapsed());
    assert!(
        accepted.elapsed() < Duration::from_secs(2),
        "{what} took {:?} to be in force:\n{}",
        accepted.elapsed(),
        run.describe()
    );
}

/// Puts the ClusterRole back however the test ends.
struct RestoreRole<'a> {
    h: &'a Harness,
    rules: Value,
}

impl Drop for RestoreRole<'_> {
    fn drop(&mut self) {
        let patch = json!([{"op": "replace", "path": "/rules", "value": self.rules}]).to_string();
        let run = self.h.admin.run(&[
            "patch",
            "clusterrole",
            "forcegate",
            "--type=json",
            "-p",
            &patch,
        ]);
        if !run.success() {
            eprintln!(
                "e2e: restoring ClusterRole forcegate failed:\n{}",
                run.describe()
            );
        }
    }
}

#[test]
fn a_policy_reading_what_forcegate_may_not_list_shows_permissions_granted_false() {
    let h = harness();
    let _running = h.shared();
    let role = h
        .admin
        .get(&["clusterrole", "forcegate"])
        .expect("ClusterRole forcegate");
    let rules = role["rules"].clone();
    let _restore = RestoreRole {
        h,
        rules: rules.clone(),
    };
    let without: Vec<Value> = rules
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| r["resources"] != json!(["endpointslices"]))
        .cloned()
        .collect();
    assert_eq!(
        without.len() + 1,
        rules.as_array().map_or(0, Vec::len),
        "{rules}"
    );
    let patch = json!([{"op": "replace", "path": "/rules", "value": without}]).to_string();
    h.admin.ok(&[
        "patch",
        "clusterrole",
        "forcegate",
        "--type=json",
        "-p",
        &patch,
    ]);

    let name = "e2e-permissions";
    let policy = scoped_policy(
        name,
        "e2e-none",
        "Deny",
        json!([{"fact": "endpoints.referenced", "equals": true}]),
    );
    let run = apply(h, &policy);
    assert!(run.success(), "{}", run.describe());
    // The policy itself compiles: Ready once the replica has reported it
    // (the permission check may be written first), its facts just stay
    // unknown.
    let (granted, object) = eventually(
        "PermissionsGranted=False and Ready=True",
        STATUS_TIMEOUT,
        || {
            let (c, object) = condition(h, name, "PermissionsGranted")?;
            let ready = status_condition(&object, "Ready").is_some_and(|r| r["status"] == "True");
            if c["status"] == "False" && ready {
                Ok((c, object))
            } else {
                Err(object.to_string())
            }
        },
    );
    let message = granted["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("endpointslices.discovery.k8s.io"),
        "{object}"
    );
    assert_eq!(granted["reason"], "Forbidden");
    delete_policy(h, name);
}
