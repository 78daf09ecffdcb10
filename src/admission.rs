//! AdmissionReview v1 in and out: strict decoding, deterministic encoding.
//!
//! The API server is strict about what it accepts back (uid echoed, v1 only,
//! warning and audit-annotation limits), so this module is strict about what
//! it sends: every response goes through [`respond`] and [`encode`], whether
//! it leaves through the server or through `forcegate review`, so both
//! send the same bytes.

use std::collections::BTreeMap;

use base64::Engine as _;
use kube::core::admission::{AdmissionRequest, META_API_VERSION_V1, META_KIND, Operation};
use kube::core::{DynamicObject, TypeMeta};
use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::error::Category;
use serde_json::value::RawValue;

use crate::decision::Decision;

mod warnings;

pub use warnings::{MAX_WARNING_RUNES, MAX_WARNINGS_BYTES, clean_warning, limit_warnings};

/// A decoded admission request; object and oldObject kept dynamic.
pub type Request = AdmissionRequest<DynamicObject>;

/// Why a body is not an AdmissionReview we can answer. Maps to a 4xx.
#[derive(Debug, thiserror::Error)]
pub enum BadReview {
    #[error("body is not valid JSON: {0}")]
    NotJson(String),
    #[error("body is not a JSON object")]
    NotAnObject,
    #[error("apiVersion is {found:?}, expected \"admission.k8s.io/v1\"")]
    WrongApiVersion { found: String },
    #[error("kind is {found:?}, expected \"AdmissionReview\"")]
    WrongKind { found: String },
    #[error("AdmissionReview has no request")]
    NoRequest,
    #[error("AdmissionReview request has no uid")]
    NoUid,
    #[error("AdmissionReview request is malformed: {0}")]
    Malformed(String),
    #[error("content type {found:?} is not application/json")]
    WrongContentType { found: String },
    #[error("body exceeds the limit of {limit} bytes")]
    TooLarge { limit: usize },
    #[error("could not read the request body: {0}")]
    BodyRead(String),
}

impl BadReview {
    /// Short label for the `reason` metric label.
    pub fn reason(&self) -> &'static str {
        match self {
            BadReview::NotJson(_) => "not_json",
            BadReview::NotAnObject => "not_an_object",
            BadReview::WrongApiVersion { .. } => "wrong_api_version",
            BadReview::WrongKind { .. } => "wrong_kind",
            BadReview::NoRequest => "no_request",
            BadReview::NoUid => "no_uid",
            BadReview::Malformed(_) => "malformed_request",
            BadReview::WrongContentType { .. } => "wrong_content_type",
            BadReview::TooLarge { .. } => "too_large",
            BadReview::BodyRead(_) => "body_read",
        }
    }

    /// The HTTP status the server answers with. Always a 4xx: the caller
    /// sent something we cannot judge, so retrying the same bytes is useless.
    pub fn http_status(&self) -> u16 {
        match self {
            BadReview::WrongContentType { .. } => 415,
            BadReview::TooLarge { .. } => 413,
            _ => 400,
        }
    }
}

/// Parse and validate an AdmissionReview v1 request body.
///
/// Checks run outside-in so the error names the first thing wrong: JSON,
/// apiVersion/kind, presence of `request`, then the uid (without a uid no
/// response can be correlated), then the full request shape.
pub fn decode(body: &[u8]) -> Result<Request, BadReview> {
    // One pass over the body: the envelope is checked while `request` stays
    // raw, then the request is decoded straight from its bytes. Building a
    // `Value` tree first and converting it again costs a sixth of a request.
    if first_byte(body) != Some(b'{') {
        return Err(match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => BadReview::NotAnObject,
            Err(err) => BadReview::NotJson(err.to_string()),
        });
    }
    let envelope: Envelope<'_> =
        serde_json::from_slice(body).map_err(|err| match err.classify() {
            Category::Data => BadReview::Malformed(err.to_string()),
            _ => BadReview::NotJson(err.to_string()),
        })?;
    let api_version = text(envelope.api_version);
    if api_version != META_API_VERSION_V1 {
        return Err(BadReview::WrongApiVersion { found: api_version });
    }
    let kind = text(envelope.kind);
    if kind != META_KIND {
        return Err(BadReview::WrongKind { found: kind });
    }
    let raw = envelope.request.ok_or(BadReview::NoRequest)?;
    if first_byte(raw.get().as_bytes()) != Some(b'{') {
        return Err(BadReview::Malformed("request is not an object".into()));
    }
    // Without a uid no response can be correlated: say so before any other
    // shape problem, as the API server's own validation would.
    let mut request: Request = match serde_json::from_str(raw.get()) {
        Ok(request) => request,
        Err(err) => {
            let probe: UidProbe = serde_json::from_str(raw.get()).unwrap_or_default();
            return Err(match probe.uid {
                Some(Value::String(uid)) if !uid.trim().is_empty() => {
                    BadReview::Malformed(err.to_string())
                }
                _ => BadReview::NoUid,
            });
        }
    };
    if request.uid.trim().is_empty() {
        return Err(BadReview::NoUid);
    }
    request.types = TypeMeta { api_version, kind };
    Ok(request)
}

/// The AdmissionReview around the request, with the request left unparsed.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    #[serde(default)]
    api_version: Value,
    #[serde(default)]
    kind: Value,
    #[serde(default, borrow)]
    request: Option<&'a RawValue>,
}

#[derive(Default, serde::Deserialize)]
struct UidProbe {
    uid: Option<Value>,
}

fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

fn text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        _ => String::new(),
    }
}

/// The AdmissionReview response as it is sent, members in alphabetical
/// order at every level (struct order, and a `BTreeMap`). kube's
/// `AdmissionResponse` keeps audit annotations in a `HashMap` (random
/// order), writes its patch as a number array where Go's `[]byte` reads
/// base64, and writes every member of its `Status`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Response<'a> {
    pub allowed: bool,
    /// Bare names (see [`audit_annotations`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<&'a str, &'a str>,
    /// A JSON patch, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    /// Only on a denial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Denial<'a>>,
    pub uid: &'a str,
    /// Within the API server's limits (see [`limit_warnings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A denial's `status`: a `metav1.Status` with code 403, reason
/// `Forbidden`, which kubectl shows as
/// `admission webhook "..." denied the request: <message>`.
#[derive(Clone, Debug, Serialize)]
pub struct Denial<'a> {
    pub code: u16,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub message: &'a str,
    pub reason: &'static str,
    pub status: &'static str,
}

/// The envelope around a [`Response`].
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Review<'r, 'a> {
    api_version: &'static str,
    kind: &'static str,
    response: &'r Response<'a>,
}

/// Build the response for `request` from `decision` (+ an optional JSON patch).
pub fn respond<'a>(
    request: &'a Request,
    decision: &'a Decision,
    patch: Option<json_patch::Patch>,
) -> Response<'a> {
    let patch = patch
        .filter(|patch| !patch.0.is_empty())
        .and_then(|patch| encode_patch(request, &patch));
    Response {
        allowed: decision.allowed,
        audit_annotations: audit_annotations(&decision.audit_annotations),
        patch_type: patch.is_some().then_some("JSONPatch"),
        patch,
        status: (!decision.allowed).then(|| Denial {
            code: 403,
            message: &decision.message,
            reason: "Forbidden",
            status: "Failure",
        }),
        uid: &request.uid,
        warnings: limit_warnings(&decision.warnings),
    }
}

/// The patch as the API server reads it, if it can apply one: it rejects
/// any patch for an operation without an object (DELETE, CONNECT).
fn encode_patch(request: &Request, patch: &json_patch::Patch) -> Option<String> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        tracing::warn!(
            operation = ?request.operation,
            "dropping patch: the operation has no object to patch"
        );
        return None;
    }
    match serde_json::to_vec(patch) {
        Ok(bytes) => Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        Err(err) => {
            tracing::warn!(error = %err, "dropping unserializable patch");
            None
        }
    }
}

/// The API server stores a webhook's audit annotation `k` as
/// `<webhook name>/k` and drops it unless that is a qualified name, so `k`
/// itself must be a bare name: a `prefix/` (e.g. `forcegate.dev/`) is
/// stripped here, and keys that still are not valid names are dropped.
/// On a clash after stripping, the first key in sorted order wins.
pub fn audit_annotations(annotations: &BTreeMap<String, String>) -> BTreeMap<&str, &str> {
    let mut out = BTreeMap::new();
    for (key, value) in annotations {
        let name = key.rsplit_once('/').map_or(key.as_str(), |(_, name)| name);
        if !is_qualified_name_part(name) {
            tracing::warn!(key = %key, "dropping audit annotation with an invalid key");
            continue;
        }
        out.entry(name).or_insert(value.as_str());
    }
    out
}

/// The name part of a Kubernetes qualified name: 1–63 characters of
/// `[A-Za-z0-9_.-]`, starting and ending alphanumeric.
fn is_qualified_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            bytes.len() <= 63
                && first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// The AdmissionReview around `response`, as JSON.
pub fn encode(response: &Response<'_>) -> Vec<u8> {
    let review = Review {
        api_version: META_API_VERSION_V1,
        kind: META_KIND,
        response,
    };
    // Room for the envelope and the texts, so the buffer is not regrown
    // while a denial's kilobytes are written.
    let texts = response
        .status
        .as_ref()
        .map_or(0, |denial| denial.message.len())
        + response.warnings.iter().map(String::len).sum::<usize>()
        + response.patch.as_ref().map_or(0, String::len);
    let mut body = Vec::with_capacity(512 + texts + texts / 16);
    // Strings, a bool, a number and string-keyed maps: nothing that
    // serde_json can fail to write.
    match serde_json::to_writer(&mut body, &review) {
        Ok(()) => body,
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
