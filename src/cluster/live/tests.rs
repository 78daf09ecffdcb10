//! The watch loop against scripted fake API servers: sync, events, re-list
//! on 410, errors and staleness, without a real cluster.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, WatchParams};

use super::*;
use crate::cluster::ClusterView;
use crate::cluster::object::Object;

type Events = mpsc::UnboundedSender<Result<Change, CallError>>;

type Watch = Result<mpsc::UnboundedReceiver<Result<Change, CallError>>, CallError>;

/// Answers list and watch calls in order from what the test pushes; a call
/// with nothing pushed yet waits (as a slow API server would).
struct Fake {
    kind: Kind,
    lists_tx: mpsc::UnboundedSender<Result<Page, CallError>>,
    lists: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Result<Page, CallError>>>>,
    watches_tx: mpsc::UnboundedSender<Watch>,
    watches: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Watch>>>,
    list_calls: AtomicUsize,
    watched_from: Mutex<Vec<String>>,
}

impl Fake {
    fn new(kind: Kind) -> Arc<Self> {
        let (lists_tx, lists) = mpsc::unbounded();
        let (watches_tx, watches) = mpsc::unbounded();
        Arc::new(Self {
            kind,
            lists_tx,
            lists: Arc::new(tokio::sync::Mutex::new(lists)),
            watches_tx,
            watches: Arc::new(tokio::sync::Mutex::new(watches)),
            list_calls: AtomicUsize::new(0),
            watched_from: Mutex::new(Vec::new()),
        })
    }

    fn push_list(&self, page: Result<Page, CallError>) {
        self.lists_tx.unbounded_send(page).expect("fake open");
    }

    /// Queue a watch; events sent on the returned sender arrive on it.
    fn push_watch(&self) -> Events {
        let (tx, rx) = mpsc::unbounded();
        self.watches_tx.unbounded_send(Ok(rx)).expect("fake open");
        tx
    }

    fn push_watch_error(&self, err: CallError) {
        self.watches_tx.unbounded_send(Err(err)).expect("fake open");
    }

    fn versions(&self) -> Vec<String> {
        self.watched_from.lock().expect("lock").clone()
    }
}

impl WatchClient for Fake {
    fn kind(&self) -> Kind {
        self.kind
    }

    fn list(&self, _params: ListParams) -> BoxFuture<'static, Result<Page, CallError>> {
        self.list_calls.fetch_add(1, Ordering::SeqCst);
        let lists = self.lists.clone();
        async move {
            match lists.lock().await.next().await {
                Some(answer) => answer,
                None => futures::future::pending().await,
            }
        }
        .boxed()
    }

    fn watch(
        &self,
        _params: WatchParams,
        version: String,
    ) -> BoxFuture<'static, Result<Changes, CallError>> {
        self.watched_from.lock().expect("lock").push(version);
        let watches = self.watches.clone();
        async move {
            match watches.lock().await.next().await {
                Some(Ok(rx)) => Ok(rx.boxed()),
                Some(Err(err)) => Err(err),
                None => futures::future::pending().await,
            }
        }
        .boxed()
    }
}

fn pod(name: &str, version: &str) -> Object {
    Object::from(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

fn page(objects: Vec<Object>, version: &str, next: Option<&str>) -> Result<Page, CallError> {
    Ok(Page {
        objects,
        resource_version: Some(version.into()),
        continue_token: next.map(str::to_owned),
    })
}

fn fast() -> Timing {
    Timing {
        page_size: 2,
        watch_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        backoff_min: Duration::from_millis(5),
        backoff_max: Duration::from_millis(20),
    }
}

const STALE: Duration = Duration::from_secs(300);

fn start(fakes: &[Arc<Fake>]) -> LiveCluster {
    let clients = fakes
        .iter()
        .map(|f| f.clone() as Arc<dyn WatchClient>)
        .collect();
    LiveCluster::from_clients_with_timing(clients, STALE, fast())
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn pod_names(live: &LiveCluster) -> Vec<String> {
    live.read(|index| index.keys(Kind::Pod).into_iter().map(|k| k.name).collect())
}

#[tokio::test]
async fn not_ready_until_every_kind_has_listed_once() {
    let pods = Fake::new(Kind::Pod);
    let nodes = Fake::new(Kind::Node);
    pods.push_list(page(vec![pod("a", "1"), pod("b", "2")], "10", Some("more")));
    pods.push_list(page(vec![pod("c", "3")], "11", None));
    let live = start(&[pods.clone(), nodes.clone()]);
    eventually("pods synced", || live.pod("ns", "a").is_ok()).await;
    assert_eq!(pod_names(&live), ["a", "b", "c"], "all pages applied");
    assert!(!live.is_synced(), "nodes have not listed yet");
    let unknown = live.node("n1").expect_err("nodes not synced");
    assert_eq!(unknown.kind, "Node");
    assert!(unknown.reason.contains("not synced"));
    assert!(
        live.namespace_counts("ns").is_ok(),
        "pods are the only namespaced kind watched"
    );

    nodes.push_list(Ok(Page {
        objects: vec![Object::from(Node {
            metadata: ObjectMeta {
                name: Some("n1".into()),
                ..ObjectMeta::default()
            },
            ..Node::default()
        })],
        resource_version: Some("5".into()),
        continue_token: None,
    }));
    assert!(live.wait_until_synced(Duration::from_secs(5)).await);
    assert!(live.node("n1").expect("synced").is_some());
    let status = live.status();
    let pod_status = status.iter().find(|s| s.kind == "Pod").expect("pod status");
    assert!(pod_status.synced && !pod_status.stale);
    assert_eq!(pod_status.objects, 3);
    let unwatched = status
        .iter()
        .find(|s| s.kind == "Lease")
        .expect("lease status");
    assert!(
        unwatched
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("not watched"))
    );
}

#[tokio::test]
async fn watch_events_update_the_index_and_resume_from_the_last_version() {
    let pods = Fake::new(Kind::Pod);
    pods.push_list(page(vec![pod("a", "1")], "10", None));
    let events = pods.push_watch();
    let live = start(std::slice::from_ref(&pods));
    eventually("synced", || live.is_synced()).await;

    events
        .unbounded_send(Ok(Change::Upsert(pod("b", "11"), "11".into())))
        .expect("send");
    events
        .unbounded_send(Ok(Change::Delete(pod("a", "12"), "12".into())))
        .expect("send");
    events
        .unbounded_send(Ok(Change::Bookmark("15".into())))
        .expect("send");
    eventually("events applied", || pod_names(&live) == ["b"]).await;
    assert!(live.pod_by_uid("uid-a").expect("known").is_none());

    // The server ends the watch (timeoutSeconds); the loop re-watches from the bookmark.
    let _next = pods.push_watch();
    drop(events);
    eventually("re-watched", || pods.versions().len() == 2).await;
    assert_eq!(pods.versions(), ["10", "15"]);
    assert_eq!(
        pods.list_calls.load(Ordering::SeqCst),
        1,
        "no re-list needed"
    );
}

#[tokio::test]
async fn gone_resource_version_relists_and_drops_vanished_objects() {
    let pods = Fake::new(Kind::Pod);
    pods.push_list(page(vec![pod("a", "1"), pod("b", "2")], "10", None));
    let events = pods.push_watch();
    pods.push_list(page(vec![pod("b", "2"), pod("c", "30")], "40", None));
    let _after = pods.push_watch();
    let live = start(std::slice::from_ref(&pods));
    eventually("synced", || live.is_synced()).await;
    events
        .unbounded_send(Ok(Change::Failure {
            code: 410,
            message: "too old resource version: 10 (25)".into(),
        }))
        .expect("send");
    eventually("re-listed", || pod_names(&live) == ["b", "c"]).await;
    assert_eq!(pods.versions(), ["10", "40"]);
    assert!(live.pod_by_uid("uid-a").expect("known").is_none());
}

#[tokio::test]
async fn list_errors_are_counted_and_explained_until_it_recovers() {
    let pods = Fake::new(Kind::Pod);
    pods.push_list(Err(CallError {
        code: Some(403),
        message: "pods is forbidden: User \"system:serviceaccount:forcegate:forcegate\" cannot list resource \"pods\" in API group \"\" at the cluster scope".into(),
    }));
    pods.push_list(page(vec![pod("a", "1")], "10", None));
    let live = start(std::slice::from_ref(&pods));
    eventually("recovered", || live.is_synced()).await;
    let status = live.status();
    let pod_status = status.iter().find(|s| s.kind == "Pod").expect("status");
    assert_eq!(pod_status.watch_errors, 1);
    assert!(
        pod_status.last_error.is_none(),
        "cleared by the successful list"
    );
    assert_eq!(pods.list_calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_kind_unheard_of_beyond_the_limit_is_stale() {
    let pods = Fake::new(Kind::Pod);
    pods.push_list(page(vec![pod("a", "1")], "10", None));
    let live = start(std::slice::from_ref(&pods));
    eventually("synced", || live.is_synced()).await;
    let later = Instant::now() + STALE + Duration::from_secs(5);
    let status = live.status_at(later);
    let pod_status = status.iter().find(|s| s.kind == "Pod").expect("status");
    assert!(pod_status.stale);
    assert!(pod_status.seconds_since_event.is_some_and(|s| s > 300.0));
    let unknown = live.available_at(Kind::Pod, later).expect_err("stale");
    assert!(unknown.reason.starts_with("stale"), "{}", unknown.reason);
    assert!(
        live.is_synced(),
        "stale is not unsynced: readiness reports it separately"
    );
}

#[tokio::test]
async fn watches_that_keep_failing_back_off_and_count_errors() {
    let pods = Fake::new(Kind::Pod);
    pods.push_list(page(vec![], "10", None));
    for _ in 0..3 {
        pods.push_watch_error(CallError {
            code: Some(500),
            message: "etcdserver: leader changed".into(),
        });
    }
    let live = start(std::slice::from_ref(&pods));
    eventually("three failed watches", || pods.versions().len() >= 4).await;
    let status = live.status();
    let pod_status = status.iter().find(|s| s.kind == "Pod").expect("status");
    assert_eq!(pod_status.watch_errors, 3);
    assert!(
        pod_status
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("leader changed"))
    );
    assert_eq!(
        pods.versions(),
        ["10", "10", "10", "10"],
        "resumes from the same version"
    );
}
