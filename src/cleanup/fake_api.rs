//! An in-memory stand-in for the API server's generic object semantics, for
//! tests of the live paths without a cluster: create (AlreadyExists), get
//! (NotFound), replace with resourceVersion (Conflict), merge-patch (also on
//! `/status`). The real API server runs in the end-to-end tests.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use kube::Client;
use serde_json::{Value, json};

#[derive(Default)]
struct Store {
    objects: BTreeMap<String, Value>,
    version: u64,
    log: Vec<String>,
}

#[derive(Clone, Default)]
pub(crate) struct FakeApi {
    store: Arc<Mutex<Store>>,
}

impl FakeApi {
    pub fn client(&self) -> Client {
        let store = self.store.clone();
        let service = tower::service_fn(move |request: Request<kube::client::Body>| {
            let store = store.clone();
            async move {
                let method = request.method().clone();
                let path = request.uri().path().to_string();
                let body = request
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let (code, reply) = store
                    .lock()
                    .expect("fake store")
                    .handle(&method, &path, body);
                let response = Response::builder()
                    .status(code)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(reply.to_string())))
                    .expect("response");
                Ok::<_, Infallible>(response)
            }
        });
        Client::new(service, "default")
    }

    /// `METHOD path` of every request so far.
    pub fn log(&self) -> Vec<String> {
        self.store.lock().expect("fake store").log.clone()
    }

    pub fn get(&self, path: &str) -> Option<Value> {
        self.store
            .lock()
            .expect("fake store")
            .objects
            .get(path)
            .cloned()
    }

    /// Change a stored object behind the clients' backs (another writer).
    pub fn edit(&self, path: &str, change: impl FnOnce(&mut Value)) {
        let mut store = self.store.lock().expect("fake store");
        store.version += 1;
        let version = store.version.to_string();
        if let Some(object) = store.objects.get_mut(path) {
            change(object);
            object["metadata"]["resourceVersion"] = json!(version);
        }
    }

    /// Objects stored under `prefix`.
    pub fn list(&self, prefix: &str) -> Vec<Value> {
        self.store
            .lock()
            .expect("fake store")
            .objects
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v.clone())
            .collect()
    }
}

fn status(code: StatusCode, reason: &str) -> (StatusCode, Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
               "code": code.as_u16(), "reason": reason, "message": reason}),
    )
}

impl Store {
    fn handle(&mut self, method: &Method, path: &str, mut body: Value) -> (StatusCode, Value) {
        self.log.push(format!("{method} {path}"));
        let item = path.strip_suffix("/status").unwrap_or(path).to_string();
        match *method {
            Method::GET => match self.objects.get(&item) {
                Some(object) => (StatusCode::OK, object.clone()),
                None => status(StatusCode::NOT_FOUND, "NotFound"),
            },
            Method::POST => {
                let Some(name) = body["metadata"]["name"].as_str().map(str::to_string) else {
                    return status(StatusCode::UNPROCESSABLE_ENTITY, "Invalid");
                };
                let key = format!("{path}/{name}");
                if self.objects.contains_key(&key) {
                    return status(StatusCode::CONFLICT, "AlreadyExists");
                }
                self.version += 1;
                body["metadata"]["resourceVersion"] = json!(self.version.to_string());
                body["metadata"]["uid"] = json!(format!("uid-{}", self.version));
                body["metadata"]["creationTimestamp"] = json!("2026-03-02T10:00:00Z");
                if let Some(object) = body.as_object_mut() {
                    // The status subresource ignores status on create.
                    object.remove("status");
                }
                self.objects.insert(key, body.clone());
                (StatusCode::CREATED, body)
            }
            Method::PUT => {
                let Some(stored) = self.objects.get(&item) else {
                    return status(StatusCode::NOT_FOUND, "NotFound");
                };
                if body["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"] {
                    return status(StatusCode::CONFLICT, "Conflict");
                }
                self.version += 1;
                body["metadata"]["resourceVersion"] = json!(self.version.to_string());
                self.objects.insert(item, body.clone());
                (StatusCode::OK, body)
            }
            Method::PATCH => {
                self.version += 1;
                let version = self.version.to_string();
                let Some(stored) = self.objects.get_mut(&item) else {
                    return status(StatusCode::NOT_FOUND, "NotFound");
                };
                json_patch::merge(stored, &body);
                stored["metadata"]["resourceVersion"] = json!(version);
                (StatusCode::OK, stored.clone())
            }
            _ => status(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed"),
        }
    }
}
