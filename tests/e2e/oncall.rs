//! The on-call commands against the real API server, run the way an
//! on-call human runs them: `kubectl forcegate ...` (the plugin binary on
//! PATH), with the admin's kubeconfig. What they print is captured for
//! docs/operations.md's "At 3 a.m." section (see `tests/doc_capture`).

use std::collections::BTreeSet;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by, record_name};
use crate::harness::harness;
use crate::kubectl::{Run, eventually};
use crate::plugin::plugin;
use crate::widgets;

const WEBHOOK: &str = "force-delete.pods.forcegate.dev";

/// (allowed, policies) the webhook named: denials list `- <policy>:`,
/// allowed requests warn `forcegate <policy>:`.
fn webhook_verdict(run: &Run) -> (bool, BTreeSet<String>) {
    let pattern = if run.success() {
        r"Warning: forcegate ([a-z0-9-]+):"
    } else {
        r"(?m)^- ([a-z0-9-]+): "
    };
    let regex = Regex::new(pattern).expect("regex");
    let policies = regex
        .captures_iter(&run.stderr)
        .map(|c| c[1].to_owned())
        .collect();
    (run.success(), policies)
}

/// The same from `explain -o json` for one action.
fn explained_verdict(action: &Value) -> (bool, BTreeSet<String>) {
    let allowed = action["allowed"].as_bool().expect("allowed");
    let wanted: &[&str] = if allowed {
        &["Warn", "Record"]
    } else {
        &["Deny"]
    };
    let policies = (action["policies"].as_array().into_iter().flatten())
        .filter(|p| {
            (p["fired"].as_array().into_iter().flatten())
                .any(|o| wanted.contains(&o["action"].as_str().unwrap_or_default()))
        })
        .filter_map(|p| p["policy"].as_str().map(str::to_owned))
        .collect();
    (allowed, policies)
}

fn force_delete_dry_run(pod: &str) -> Vec<&str> {
    vec![
        "delete",
        "pod",
        pod,
        "--force",
        "--grace-period=0",
        "--wait=false",
        "--dry-run=server",
    ]
}

#[test]
fn explain_gives_the_verdicts_the_webhook_gives_for_the_same_delete() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "explain");
    let lost = scene.node("lost", NodeState::Unreachable);
    let fenced = scene.node("fenced", NodeState::OutOfService);
    let ready = scene.node("ready", NodeState::Ready);
    let db = scene.stateful_set("db");
    scene.running_pod(
        "db-0",
        &lost,
        PodSpec {
            owner: Some(db),
            labels: vec![("app".into(), "db".into())],
            ..PodSpec::default()
        },
    );
    scene.lease("db-leader", "db-0", 3600);
    let (job, _) = scene.active_cron_job("nightly");
    scene.running_pod(
        "nightly-run",
        &lost,
        PodSpec {
            owner: Some(job),
            ..PodSpec::default()
        },
    );
    let web = scene.stateful_set("web");
    scene.attached_volume("data-web-0", &fenced);
    scene.running_pod(
        "web-0",
        &fenced,
        PodSpec {
            owner: Some(web),
            claims: vec!["data-web-0".into()],
            ..PodSpec::default()
        },
    );
    scene.running_pod("app-0", &ready, PodSpec::default());

    // What the webhook answers once its caches hold the scene: the policy
    // that denies, or `None` for allowed with a cleanup record.
    let expected = [
        ("db-0", Some("statefulset-leader")),
        ("nightly-run", Some("job-state")),
        ("web-0", None),
        ("app-0", Some("node-alive")),
    ];
    let plugin = plugin(h);
    for (pod, denied) in expected {
        let webhook = scene.until_forcegate_sees(&force_delete_dry_run(pod), |run| match denied {
            Some(policy) => denied_by(run, WEBHOOK, policy),
            None => run.success() && run.stderr.contains("forcegate record-force-deletions"),
        });
        let (explained, run) = plugin.json(&["explain", "pod", pod, "-n", &scene.ns]);
        let delete = &explained["actions"][0];
        assert_eq!(delete["action"], "forceDelete", "{}", run.describe());
        assert_eq!(
            explained_verdict(delete),
            webhook_verdict(&webhook),
            "explain and the webhook disagree on {pod}:\n{}\n{}",
            run.describe(),
            webhook.describe()
        );
        assert_eq!(
            explained["user"]["username"], "testcluster-admin",
            "explain decides for the kubeconfig's user"
        );
        // Denied, or allowed only with a cleanup record: attention either way.
        assert_eq!(run.code, Some(1), "{}", run.describe());
    }
    let run = plugin.capture("explain", &["explain", "pod", "db-0", "-n", &scene.ns], 1);
    for expected in [
        "grace-0 delete: DENIED",
        &format!("node {lost}: not Ready (Ready=Unknown"),
        "Lease e2e-explain/db-leader held by db-0",
        &format!(
            "kubectl taint nodes {lost} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
        ),
        "kubectl -n e2e-explain get lease db-leader -w",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn stuck_names_the_custom_finalizer_and_the_unavailable_apiservice_holding_a_namespace() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "stuck");
    let _cleanup = widgets::hold_namespace(&scene);

    let plugin = plugin(h);
    let (report, run) = plugin.json(&["stuck", "-A", "--older-than", "0s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let entries = report["stuck"].as_array().expect("stuck");
    let namespace = (entries.iter())
        .find(|s| s["kind"] == "Namespace" && s["name"] == scene.ns.as_str())
        .unwrap_or_else(|| panic!("namespace {} not listed:\n{}", scene.ns, run.stdout));
    let findings: Vec<(&str, &str)> = (namespace["findings"].as_array().into_iter().flatten())
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default(),
                f["text"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    let has = |code: &str, text: &str| findings.iter().any(|(c, t)| *c == code && t.contains(text));
    assert!(
        has(
            "apiservice-unavailable",
            "APIService v1.metrics.acme.example is not Available"
        ),
        "{findings:#?}"
    );
    assert!(has("finalizers-remaining", "Widget w1"), "{findings:#?}");
    assert!(
        has(
            "webhook-no-endpoints",
            "ValidatingWebhookConfiguration/acme-widgets"
        ),
        "{findings:#?}"
    );
    assert!(
        has("discovery-failure", "metrics.acme.example/v1"),
        "{findings:#?}"
    );
    let widget = (entries.iter())
        .find(|s| s["kind"] == "Widget" && s["namespace"] == scene.ns.as_str())
        .expect("widget listed");
    assert_eq!(
        widget["findings"][0]["code"], "controller-gone",
        "{widget:#}"
    );
    assert_eq!(widget["level"], "human");

    let run = plugin.capture(
        "stuck",
        &["stuck", "-n", &scene.ns, "--older-than", "0s"],
        1,
    );
    for expected in [
        "APIService v1.metrics.acme.example is not Available",
        "acme.example/cleanup: a controller matching \"acme\"",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn records_shows_the_fenced_node_record_and_its_phase_after_the_verifier_ran() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "records");
    let node = scene.node("n1", NodeState::OutOfService);
    let owner = scene.stateful_set("web");
    let attachment = scene.attached_volume("data-web-0", &node);
    let uid = scene.running_pod(
        "web-0",
        &node,
        PodSpec {
            owner: Some(owner),
            claims: vec!["data-web-0".into()],
            ..PodSpec::default()
        },
    );
    scene.until_forcegate_sees(&force_delete_dry_run("web-0"), |run| {
        run.success() && run.stderr.contains("forcegate record-force-deletions")
    });
    let deleted = scene.run(&[
        "delete",
        "pod",
        "web-0",
        "--force",
        "--grace-period=0",
        "--wait=false",
    ]);
    assert!(deleted.success(), "{}", deleted.describe());
    let name = record_name(&uid);
    let phase = |record: &Value| {
        record
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    // Verifying, with only the attachment left open (the verifier's cache
    // may see the pod go a moment after its first check).
    eventually(
        "the verifier to see the pod gone and the volume still attached",
        Duration::from_secs(45),
        || {
            let record = scene.record(&uid).ok_or("no record yet")?;
            let gone = (record
                .pointer("/status/checklist")
                .and_then(Value::as_array))
            .into_iter()
            .flatten()
            .any(|i| i["name"] == "object-gone" && i["state"] == "ok");
            if phase(&record) == "Verifying" && gone {
                Ok(())
            } else {
                Err(format!("{record:#}"))
            }
        },
    );

    let plugin = plugin(h);
    let (listed, run) = plugin.json(&["records"]);
    let row = (listed.as_array().into_iter().flatten())
        .find(|r| r["name"] == name.as_str())
        .unwrap_or_else(|| panic!("{name} not listed:\n{}", run.describe()));
    assert_eq!(row["phase"], "Verifying");
    assert_eq!(row["verified"], "byVerifier");
    assert_eq!(row["node"], node.as_str());
    assert!(
        row["open"].as_array().into_iter().flatten().any(|i| i
            .as_str()
            .is_some_and(|i| i.starts_with("volume-detached/"))),
        "{row:#}"
    );

    let run = plugin.capture("records-show", &["records", "show", &name], 0);
    for expected in [
        "Verifying",
        "[pending] volume-detached/",
        &attachment,
        "On the node",
        "crictl pods --label io.kubernetes.pod.uid=",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} in:\n{}",
            run.stdout
        );
    }

    scene.k().ok(&["delete", "volumeattachment", &attachment]);
    eventually("the record to turn Clean", Duration::from_secs(45), || {
        let record = scene.record(&uid).ok_or("record vanished")?;
        if phase(&record) == "Clean" {
            Ok(())
        } else {
            Err(format!("{record:#}"))
        }
    });
    let (clean, _) = plugin.json(&["records", "--phase", "Clean"]);
    assert!(
        clean
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["name"] == name.as_str() && r["phase"] == "Clean"),
        "{clean:#}"
    );
    let shown = plugin.run(&["records", "show", &name]);
    assert_eq!(
        shown.code,
        Some(0),
        "a Clean record needs no attention:\n{}",
        shown.describe()
    );
}
