//! Reconcile against the in-memory API: status writes, events, requeues.

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

use super::*;
use crate::cleanup::fake_api::FakeApi;
use crate::cleanup::test_view::{TestView, parse};
use crate::cleanup::{ForceDeletionSpec, KubeRecorder};

const UID: &str = "5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11";
const RECORD: &str =
    "/apis/forcegate.dev/v1alpha1/forcedeletions/fd-5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

fn spec() -> ForceDeletionSpec {
    serde_json::from_value(json!({
        "subject": "Pod db/web-0",
        "object": {"version": "v1", "kind": "Pod", "resource": "pods", "namespace": "db", "name": "web-0", "uid": UID},
        "action": {"type": "ForceDelete", "objectDeleting": true},
        "node": "worker-1",
        "podIPs": ["10.244.1.17"],
        "requester": {"username": "alice@example.com"},
        "requestedAt": "2026-03-02T10:00:00Z"
    }))
    .expect("spec")
}

fn old_node() -> Arc<Node> {
    parse(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}))
}

/// The pod still in the API (its finalizers or the kubelet are behind).
fn lingering() -> TestView {
    TestView {
        nodes: vec![old_node()],
        pods: vec![parse::<Pod>(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "db", "uid": UID},
            "spec": {"nodeName": "worker-1", "containers": [{"name": "web", "image": "nginx"}]}
        }))],
        ..TestView::default()
    }
}

fn cleaned() -> TestView {
    TestView {
        nodes: vec![old_node()],
        ..TestView::default()
    }
}

struct Harness {
    api: FakeApi,
    deadline: Duration,
}

impl Harness {
    /// A record created `age` ago through the real recorder.
    async fn new(age: Duration, deadline: Duration) -> Self {
        let api = FakeApi::default();
        KubeRecorder::new(api.client())
            .create_or_get(spec())
            .await
            .expect("record");
        let created =
            Timestamp::now() - k8s_openapi::jiff::SignedDuration::try_from(age).expect("age");
        api.edit(RECORD, |record| {
            record["metadata"]["creationTimestamp"] = json!(created.to_string());
        });
        Self { api, deadline }
    }

    fn context(&self, view: TestView) -> Arc<Context> {
        let client = self.api.client();
        Arc::new(Context {
            api: Api::all(client.clone()),
            view: Arc::new(view),
            settings: VerifierSettings::new("forcegate", "forcegate-0", self.deadline),
            metrics: CleanupMetrics::default(),
            events: EventRecorder::new(client, Reporter::from("forcegate".to_string())),
            failures: Mutex::default(),
        })
    }

    fn record(&self) -> Arc<ForceDeletion> {
        Arc::new(serde_json::from_value(self.api.get(RECORD).expect("stored")).expect("record"))
    }

    async fn reconcile(&self, view: TestView) -> Action {
        reconcile(self.record(), self.context(view))
            .await
            .expect("reconcile")
    }

    fn status(&self) -> Value {
        self.api.get(RECORD).expect("stored")["status"].clone()
    }

    fn events(&self) -> Vec<Value> {
        self.api.list(EVENTS)
    }

    fn writes(&self) -> usize {
        self.api
            .log()
            .iter()
            .filter(|l| !l.starts_with("GET"))
            .count()
    }
}

#[tokio::test]
async fn pending_record_turns_verifying_then_clean() {
    let harness = Harness::new(Duration::from_secs(30), Duration::from_secs(900)).await;
    let action = harness.reconcile(lingering()).await;
    assert_eq!(action, Action::requeue(Duration::from_secs(5)));
    let status = harness.status();
    assert_eq!(status["phase"], "Verifying");
    let items = status["checklist"].as_array().expect("checklist");
    let gone = items
        .iter()
        .find(|i| i["name"] == "object-gone")
        .expect("object-gone");
    assert_eq!(gone["state"], "pending");
    assert!(items.iter().any(|i| {
        i["state"] == "manual"
            && i["command"]
                .as_str()
                .is_some_and(|c| c.starts_with("crictl pods"))
    }));
    let events = harness.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["reason"], "Verifying");
    assert_eq!(events[0]["type"], "Normal");
    assert_eq!(events[0]["regarding"]["kind"], "ForceDeletion");
    assert_eq!(
        events[0]["regarding"]["name"],
        "fd-5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11"
    );

    // Nothing changed: no write, no event.
    let writes = harness.writes();
    harness.reconcile(lingering()).await;
    assert_eq!(harness.writes(), writes, "{:?}", harness.api.log());

    // The pod is gone: Clean, one more event, then the record is left alone.
    let action = harness.reconcile(cleaned()).await;
    assert_eq!(action, Action::await_change());
    assert_eq!(harness.status()["phase"], "Clean");
    let clean = harness.status()["conditions"]
        .as_array()
        .expect("conditions")[0]
        .clone();
    assert_eq!(
        (clean["type"].as_str(), clean["status"].as_str()),
        (Some("Clean"), Some("True"))
    );
    let reasons: Vec<Value> = harness
        .events()
        .iter()
        .map(|e| e["reason"].clone())
        .collect();
    assert!(reasons.contains(&json!("Clean")), "{reasons:?}");
    let writes = harness.writes();
    assert_eq!(harness.reconcile(lingering()).await, Action::await_change());
    assert_eq!(harness.writes(), writes, "Clean is final");
}

#[tokio::test]
async fn not_clean_after_the_deadline_needs_attention() {
    let harness = Harness::new(Duration::from_secs(3600), Duration::from_secs(900)).await;
    let action = harness.reconcile(lingering()).await;
    assert_eq!(action, Action::requeue(Duration::from_secs(120)));
    let status = harness.status();
    assert_eq!(status["phase"], "NeedsAttention");
    let deadline = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .find(|c| c["type"] == "DeadlineExceeded")
        .cloned()
        .expect("deadline condition");
    assert_eq!(deadline["status"], "True");
    let events = harness.events();
    assert_eq!(events[0]["type"], "Warning");
    assert_eq!(events[0]["reason"], "NeedsAttention");
    assert!(
        events[0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("object-gone (pending)")),
        "{}",
        events[0]["note"]
    );
}

#[tokio::test]
async fn status_write_failure_backs_off() {
    let harness = Harness::new(Duration::from_secs(30), Duration::from_secs(900)).await;
    let record = harness.record();
    let ctx = harness.context(lingering());
    // The record vanished between the watch event and the write.
    let ghost = {
        let mut ghost = (*record).clone();
        ghost.metadata.name = Some("fd-deleted".into());
        Arc::new(ghost)
    };
    let err = reconcile(ghost.clone(), ctx.clone())
        .await
        .expect_err("404 on status");
    let delays: Vec<Action> = (0..3)
        .map(|_| error_policy(ghost.clone(), &err, ctx.clone()))
        .collect();
    assert_eq!(
        delays,
        [5, 10, 20].map(|s| Action::requeue(Duration::from_secs(s)))
    );
    // A success resets the backoff.
    reconcile(record, ctx.clone()).await.expect("ok");
    assert_eq!(
        error_policy(ghost, &err, ctx),
        Action::requeue(Duration::from_secs(40))
    );
}
