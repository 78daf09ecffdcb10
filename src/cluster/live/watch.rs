//! The list-then-watch loop that keeps one kind of the index current.
//!
//! Written against [`WatchClient`] rather than kube's `watcher()` because the
//! staleness rule needs to see what `watcher()` hides: bookmarks and
//! successful watch restarts are proof of life for a kind that simply has
//! not changed. The loop: list everything (paged) and replace the kind in
//! the index; watch from that resourceVersion, applying events; on `410
//! Gone` list again; on other errors back off and resume.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use kube::api::{ListParams, WatchParams};

use super::Shared;
use crate::cluster::kind::Kind;
use crate::cluster::object::Object;

/// One page of a list.
pub struct Page {
    pub objects: Vec<Object>,
    pub resource_version: Option<String>,
    pub continue_token: Option<String>,
}

/// One watch event, already converted to its record.
pub enum Change {
    Upsert(Object, String),
    Delete(Object, String),
    Bookmark(String),
    /// A `Status` sent in the stream; 410 means the resourceVersion is gone.
    Failure {
        code: u16,
        message: String,
    },
}

/// Why a list or watch call failed.
#[derive(Debug)]
pub struct CallError {
    /// HTTP status when the API server answered (410 = resourceVersion gone).
    pub code: Option<u16>,
    pub message: String,
}

impl From<kube::Error> for CallError {
    fn from(err: kube::Error) -> Self {
        let code = match &err {
            kube::Error::Api(status) => Some(status.code),
            _ => None,
        };
        Self {
            code,
            message: err.to_string(),
        }
    }
}

pub type Changes = BoxStream<'static, Result<Change, CallError>>;

/// List and watch one kind. Implemented over `kube::Api` for real clusters
/// and by scripted fakes in tests.
pub trait WatchClient: Send + Sync + 'static {
    fn kind(&self) -> Kind;
    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<Page, CallError>>;
    fn watch(
        &self,
        params: WatchParams,
        version: String,
    ) -> BoxFuture<'static, Result<Changes, CallError>>;
}

/// Timing knobs, derived from `stale_after` so that a healthy quiet watch
/// always reconnects (= proves itself alive) well within the limit.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub page_size: u32,
    /// `timeoutSeconds` of each watch call.
    pub watch_timeout: Duration,
    /// No item for this long on an open watch: assume a dead connection.
    pub idle_timeout: Duration,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
}

impl Timing {
    pub fn for_stale_after(stale_after: Duration, page_size: u32) -> Self {
        let watch_secs = (stale_after.as_secs() / 3).clamp(10, 290);
        Self {
            page_size,
            watch_timeout: Duration::from_secs(watch_secs),
            idle_timeout: Duration::from_secs(watch_secs + 15),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
        }
    }
}

struct Backoff {
    next: Duration,
    min: Duration,
    max: Duration,
}

impl Backoff {
    fn new(timing: &Timing) -> Self {
        Self {
            next: timing.backoff_min,
            min: timing.backoff_min,
            max: timing.backoff_max,
        }
    }

    fn reset(&mut self) {
        self.next = self.min;
    }

    /// Exponential with up to 25% jitter, so kinds failing together (an API
    /// server restart) do not retry in lockstep.
    async fn wait(&mut self) {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let jitter = self.next.mul_f64(f64::from(nanos % 1000) / 4000.0);
        tokio::time::sleep(self.next + jitter).await;
        self.next = (self.next * 2).min(self.max);
    }
}

/// Keep `client`'s kind in `shared` current, forever.
pub async fn run(client: Arc<dyn WatchClient>, shared: Arc<Shared>, timing: Timing) {
    let kind = client.kind();
    let mut backoff = Backoff::new(&timing);
    loop {
        let version = match list_all(client.as_ref(), &timing).await {
            Ok((objects, version)) => {
                let count = objects.len();
                shared.write_index(|index| index.replace_kind(kind, objects));
                shared.with_state(kind, |s| s.listed(Instant::now()));
                tracing::debug!(kind = %kind, objects = count, "listed");
                backoff.reset();
                version
            }
            Err(err) => {
                report(&shared, kind, "list", &err);
                backoff.wait().await;
                continue;
            }
        };
        watch_until_gone(client.as_ref(), &shared, &timing, &mut backoff, version).await;
    }
}

async fn list_all(
    client: &dyn WatchClient,
    timing: &Timing,
) -> Result<(Vec<Object>, String), CallError> {
    let mut objects = Vec::new();
    let mut continue_token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(timing.page_size);
        if let Some(token) = &continue_token {
            params = params.continue_token(token);
        }
        let page = client.list(params).await?;
        objects.extend(page.objects);
        match page.continue_token.filter(|t| !t.is_empty()) {
            Some(token) => continue_token = Some(token),
            None => {
                let version = page
                    .resource_version
                    .filter(|v| !v.is_empty())
                    .ok_or(CallError {
                        code: None,
                        message: "list returned no resourceVersion".to_owned(),
                    })?;
                return Ok((objects, version));
            }
        }
    }
}

/// Watch from `version` until the API server says it is gone (then the
/// caller lists again). Other failures back off and resume the watch.
async fn watch_until_gone(
    client: &dyn WatchClient,
    shared: &Shared,
    timing: &Timing,
    backoff: &mut Backoff,
    mut version: String,
) {
    let kind = client.kind();
    loop {
        let params = WatchParams::default().timeout(timing.watch_timeout.as_secs() as u32);
        let mut stream = match client.watch(params, version.clone()).await {
            Ok(stream) => stream,
            Err(err) if err.code == Some(410) => {
                report(shared, kind, "watch", &err);
                return;
            }
            Err(err) => {
                report(shared, kind, "watch", &err);
                backoff.wait().await;
                continue;
            }
        };
        shared.with_state(kind, |s| s.contact(Instant::now()));
        let opened = Instant::now();
        let mut items = 0usize;
        loop {
            let next = tokio::time::timeout(timing.idle_timeout, stream.next()).await;
            let change = match next {
                Err(_elapsed) => {
                    tracing::debug!(kind = %kind, "watch idle, reconnecting");
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(err))) => {
                    report(shared, kind, "watch stream", &err);
                    break;
                }
                Ok(Some(Ok(change))) => change,
            };
            items += 1;
            let now = Instant::now();
            match change {
                Change::Upsert(object, v) => {
                    shared.write_index(|index| index.apply(object));
                    version = v;
                }
                Change::Delete(object, v) => {
                    let key = object.key();
                    shared.write_index(|index| index.delete(kind, &key));
                    version = v;
                }
                Change::Bookmark(v) => version = v,
                Change::Failure { code, message } => {
                    let err = CallError {
                        code: Some(code),
                        message,
                    };
                    report(shared, kind, "watch event", &err);
                    if code == 410 {
                        return;
                    }
                    break;
                }
            }
            shared.with_state(kind, |s| s.contact(now));
        }
        // A watch that closes at once, again and again, must not spin.
        if items == 0 && opened.elapsed() < Duration::from_secs(1) {
            backoff.wait().await;
        } else {
            backoff.reset();
        }
    }
}

fn report(shared: &Shared, kind: Kind, what: &str, err: &CallError) {
    if err.code == Some(410) {
        tracing::debug!(kind = %kind, "{what}: resourceVersion expired, listing again");
    } else {
        tracing::warn!(kind = %kind, code = ?err.code, error = %err.message, "{what} failed");
    }
    let message = format!("{what}: {}", err.message);
    shared.with_state(kind, |s| s.failed(message));
}
