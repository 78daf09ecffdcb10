//! `explain` over the example snapshot and the shipped policies.

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::*;
use crate::cleanup::NoopRecorder;
use crate::cluster::SnapshotCluster;
use crate::engine::{Endpoint, Settings};
use crate::oncall::inventory::Inventory;
use crate::oncall::resource;
use crate::policy::PolicySet;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn engine() -> (Engine, Inventory) {
    let policies = PolicySet::load_dir(&root().join("policies")).expect("shipped policies");
    let cluster = SnapshotCluster::load(&[root().join("examples/cluster")]).expect("snapshot");
    let inventory = Inventory::from_files(cluster.files()).expect("raw objects");
    let engine = Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        Arc::new(cluster),
        Arc::new(NoopRecorder),
        Settings::default(),
    );
    (engine, inventory)
}

fn alice() -> User {
    User {
        username: "alice@example.com".into(),
        groups: vec!["oncall".into(), "system:authenticated".into()],
    }
}

fn explained(resource_name: &str, namespace: &str, name: &str) -> (Explanation, Target, Engine) {
    let (engine, inventory) = engine();
    let types = resource::from_inventory(&inventory);
    let rt = resource::resolve(resource_name, &types).expect("type");
    let target = resource::find_target(&inventory, rt, namespace, name).expect("target");
    let explanation = explain(&engine, &target, &alice(), Timestamp::now()).expect("explain");
    (explanation, target, engine)
}

fn fired(report: &ActionReport, action: crate::decision::Action) -> Vec<&str> {
    (report.policies.iter())
        .filter(|p| p.fired.iter().any(|o| o.action == action))
        .map(|p| p.policy.as_str())
        .collect()
}

#[test]
fn a_leader_on_an_unreachable_node_is_denied_with_its_facts_leftovers_and_safe_path() {
    let (explanation, _, _) = explained("pod", "data", "db-0");
    let actions: Vec<Action> = explanation.actions.iter().map(|a| a.action).collect();
    assert_eq!(actions, [Action::ForceDelete, Action::Eviction]);
    let delete = &explanation.actions[0];
    assert!(!delete.allowed);
    let denied = fired(delete, crate::decision::Action::Deny);
    assert!(denied.contains(&"statefulset-leader"), "{denied:?}");
    assert!(denied.contains(&"attached-volumes"), "{denied:?}");
    // Every loaded policy has a verdict, fired or not.
    assert!(
        delete
            .policies
            .iter()
            .any(|p| p.policy == "node-alive" && p.fired.is_empty())
    );
    let node = delete.facts.node.as_ref().expect("node facts");
    assert_eq!(
        (node.name.as_str(), node.ready, node.fenced),
        ("worker-2", false, false)
    );
    assert!(
        delete
            .facts
            .endpoints
            .as_ref()
            .is_some_and(|e| e.referenced),
        "shown even if no policy reads it"
    );
    let left: Vec<&str> = delete.left_behind.iter().map(|i| i.name.as_str()).collect();
    for item in [
        "lease-released/data/db-leader",
        "node/sandbox",
        "node/mounts",
    ] {
        assert!(left.contains(&item), "{item} in {left:?}");
    }
    assert!(
        left.iter().any(|i| i.starts_with("volume-detached/")),
        "{left:?}"
    );
    assert!(!left.contains(&"object-gone"));
    let commands: Vec<&str> = explanation
        .safe_path
        .iter()
        .filter_map(|s| s.command.as_deref())
        .collect();
    assert!(
        commands.contains(
            &"kubectl taint nodes worker-2 node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
        ),
        "{commands:?}"
    );
    assert!(
        commands.contains(&"kubectl -n data get lease db-leader -w"),
        "{commands:?}"
    );
    assert!(explanation.needs_attention());
}

#[test]
fn a_pod_on_a_ready_node_says_delete_it_gracefully() {
    let (explanation, _, _) = explained("po", "shop", "web-5d8f9c7b6d-k2x7p");
    assert_eq!(
        fired(&explanation.actions[0], crate::decision::Action::Deny),
        ["node-alive"]
    );
    assert_eq!(
        explanation.safe_path[0].command.as_deref(),
        Some("kubectl -n shop delete pod web-5d8f9c7b6d-k2x7p")
    );
}

#[test]
fn a_claim_in_use_names_the_pod_to_delete_first() {
    let (explanation, _, _) = explained("pvc", "legacy-app", "app-data");
    let actions: Vec<Action> = explanation.actions.iter().map(|a| a.action).collect();
    assert_eq!(actions, [Action::FinalizerStrip]);
    let strip = &explanation.actions[0];
    assert_eq!(
        fired(strip, crate::decision::Action::Deny),
        ["protected-finalizers"]
    );
    assert_eq!(
        strip.facts.finalizers[0].owner.as_deref(),
        Some("pvc-protection-controller")
    );
    assert_eq!(
        explanation.safe_path[0].command.as_deref(),
        Some("kubectl -n legacy-app delete pod worker-0")
    );
}

#[test]
fn a_namespace_with_objects_left_is_not_finalized() {
    let (explanation, _, _) = explained("ns", "", "legacy-app");
    let finalize = (explanation.actions.iter())
        .find(|a| a.action == Action::NamespaceFinalize)
        .expect("finalize");
    assert!(!finalize.allowed);
    assert!(
        explanation
            .safe_path
            .iter()
            .any(|s| s.command.as_deref() == Some("kubectl forcegate stuck -n legacy-app"))
    );
}

/// The verdicts are the engine's own: the same review bodies through
/// `Engine::admit` (what the server and `forcegate review` run) decide alike.
#[tokio::test]
async fn verdicts_equal_the_engines_admission_answers() {
    for (resource_name, namespace, name) in [
        ("pod", "data", "db-0"),
        ("pod", "data", "db-2"),
        ("pod", "batch", "report-29146260-7xk2p"),
        ("pvc", "legacy-app", "app-data"),
        ("ns", "", "old-team"),
    ] {
        let (explanation, target, engine) = explained(resource_name, namespace, name);
        let bodies = reviews(&target, &alice());
        assert_eq!(bodies.len(), explanation.actions.len());
        for ((action, review), report) in bodies.iter().zip(&explanation.actions) {
            assert_eq!(*action, report.action);
            let body = serde_json::to_vec(review).expect("json");
            let admitted = engine
                .admit(&body, Endpoint::Validate)
                .await
                .expect("admitted");
            let context = format!("{name} {action:?}");
            assert_eq!(report.allowed, admitted.decision.allowed, "{context}");
            assert_eq!(report.intent, admitted.intent.kind.name(), "{context}");
            let outcomes: Vec<_> = report
                .policies
                .iter()
                .flat_map(|p| p.fired.iter().cloned())
                .collect();
            let mut engine_outcomes = admitted.decision.outcomes.clone();
            engine_outcomes.sort_by(|a, b| a.policy.cmp(&b.policy));
            assert_eq!(outcomes, engine_outcomes, "{context}");
        }
    }
}
