//! AdmissionReview v1 in and out: strict decoding, deterministic encoding.
//!
//! The API server is strict about what it accepts back (uid echoed, v1 only,
//! warning and audit-annotation limits), so this module is strict about what
//! it sends: every response goes through [`respond`] and [`encode`], whether
//! it leaves through the server or through `forcegate review`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine as _;
use kube::core::DynamicObject;
use kube::core::admission::{
    AdmissionRequest, AdmissionResponse, META_API_VERSION_V1, META_KIND, Operation,
};
use kube::core::{Status, TypeMeta};
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::error::Category;
use serde_json::value::RawValue;

use crate::decision::Decision;
use crate::json_string::write_string;

/// A decoded admission request; object and oldObject kept dynamic.
pub type Request = AdmissionRequest<DynamicObject>;

/// The API server truncates each warning past this many runes.
pub const MAX_WARNING_RUNES: usize = 256;
/// The API server drops warnings once their total size passes this.
pub const MAX_WARNINGS_BYTES: usize = 4 * 1024;

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
    // `Value` tree first and converting it again cost a sixth of a request.
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

/// A response as it is sent: kube's type, with the decision's texts kept
/// apart and borrowed, the audit annotations named and ordered as they are
/// written. kube keeps annotations in a `HashMap` (filling it cost a hash
/// and two copies per annotation, only for [`encode`] to sort them again)
/// and owns its texts (a copy of a denial's kilobytes).
#[derive(Clone, Debug)]
pub struct Answer<'d> {
    /// Everything but what is kept apart below (left empty there).
    pub response: AdmissionResponse,
    /// Bare names (see [`audit_annotations`]) and values, sorted by name.
    pub audit_annotations: Vec<(&'d str, &'d str)>,
    /// A denial's `status.message`.
    pub message: &'d str,
    /// Within the API server's limits (see [`limit_warnings`]).
    pub warnings: Vec<Cow<'d, str>>,
}

impl Answer<'_> {
    /// kube's response with everything filled in.
    pub fn into_response(self) -> AdmissionResponse {
        let mut response = self.response;
        response.audit_annotations = (self.audit_annotations.into_iter())
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        if !response.allowed {
            response.result.message = self.message.to_owned();
        }
        if !self.warnings.is_empty() {
            response.warnings = Some(self.warnings.into_iter().map(Cow::into_owned).collect());
        }
        response
    }
}

/// Build the response for `request` from `decision` (+ an optional JSON patch).
///
/// Denials carry code 403 / reason `Forbidden`, which kubectl shows as
/// `admission webhook "..." denied the request: <message>`.
pub fn respond<'d>(
    request: &Request,
    decision: &'d Decision,
    patch: Option<json_patch::Patch>,
) -> Answer<'d> {
    let mut response = AdmissionResponse::from(request);
    if !decision.allowed {
        response.allowed = false;
        // The message stays in `Answer`.
        response.result = Status::failure("", "Forbidden").with_code(403);
    }
    match patch {
        Some(patch) if !patch.0.is_empty() => {
            // The API server rejects any patch for an operation without an
            // object to apply it to (DELETE, CONNECT).
            if matches!(request.operation, Operation::Create | Operation::Update) {
                match response.clone().with_patch(patch) {
                    Ok(patched) => response = patched,
                    Err(err) => tracing::warn!(error = %err, "dropping unserializable patch"),
                }
            } else {
                tracing::warn!(
                    operation = ?request.operation,
                    "dropping patch: the operation has no object to patch"
                );
            }
        }
        _ => {}
    }
    Answer {
        response,
        audit_annotations: audit_annotations(&decision.audit_annotations),
        message: &decision.message,
        warnings: limit_warnings(&decision.warnings),
    }
}

/// Apply the API server's warning limits: printable text, at most 256 runes
/// each, at most 4 KiB in total; anything past the budget is dropped whole.
pub fn limit_warnings(warnings: &[String]) -> Vec<Cow<'_, str>> {
    let mut kept = Vec::new();
    let mut total = 0;
    for warning in warnings {
        // Printable ASCII, the usual case, needs no decoding of chars; a
        // warning within the limits (the decision's always are) is
        // borrowed as it is.
        let text = if !is_printable_ascii(warning) && warning.contains(char::is_control) {
            let printable: String = (warning.chars())
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            Cow::Owned(truncate_runes(printable.trim(), MAX_WARNING_RUNES).into_owned())
        } else {
            truncate_runes(warning.trim(), MAX_WARNING_RUNES)
        };
        if text.is_empty() {
            continue;
        }
        if total + text.len() > MAX_WARNINGS_BYTES {
            break;
        }
        total += text.len();
        kept.push(text);
    }
    kept
}

/// Whether `text` is all printable ASCII (space to `~`): one pass over
/// its bytes, where a test of its chars decodes UTF-8. Sixteen bytes are
/// tested at once (a branch-free fold LLVM vectorizes): warnings run to
/// 256 bytes and each is tested when cleaned and again when sent.
pub(crate) fn is_printable_ascii(text: &str) -> bool {
    let printable = |b: u8| (b' '..=b'~').contains(&b);
    let mut chunks = text.as_bytes().chunks_exact(16);
    for chunk in &mut chunks {
        let mut bad = 0u8;
        for &b in chunk {
            bad |= u8::from(!printable(b));
        }
        if bad != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| printable(b))
}

/// `text` if it has at most `max` runes, else its first `max - 1` and `…`.
pub(crate) fn truncate_runes(text: &str, max: usize) -> Cow<'_, str> {
    // No rune is shorter than a byte: short texts need no counting.
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let keep = max.saturating_sub(1);
    let cut = if text.is_ascii() {
        // Every rune is a byte.
        Some(keep)
    } else if text.chars().nth(max).is_some() {
        // More than `max` runes: cut where the last kept one ends.
        text.char_indices().nth(keep).map(|(at, _)| at)
    } else {
        None
    };
    match cut {
        Some(cut) => {
            let mut cut_text = String::with_capacity(cut + '…'.len_utf8());
            cut_text.push_str(&text[..cut]);
            cut_text.push('…');
            Cow::Owned(cut_text)
        }
        None => Cow::Borrowed(text),
    }
}

/// The API server stores a webhook's audit annotation `k` as
/// `<webhook name>/k` and drops it unless that is a qualified name, so `k`
/// itself must be a bare name: a `prefix/` (e.g. `forcegate.dev/`) is
/// stripped here, and keys that still are not valid names are dropped.
/// On a clash after stripping, the first key in sorted order wins. Sorted
/// by name, as they are written.
pub fn audit_annotations(annotations: &BTreeMap<String, String>) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::with_capacity(annotations.len());
    for (key, value) in annotations {
        // A byte search: `rfind` on a char pattern costs more than the
        // rest of the loop for keys this short.
        let name = key
            .bytes()
            .rposition(|b| b == b'/')
            .map_or(key.as_str(), |slash| &key[slash + 1..]);
        if !is_qualified_name_part(name) {
            tracing::warn!(key = %key, "dropping audit annotation with an invalid key");
            continue;
        }
        out.push((name, value));
    }
    // Keys without a prefix (all of forcegate's) come sorted already. A
    // stable sort keeps the first key of a clash first.
    out.sort_by(|a, b| a.0.cmp(b.0));
    out.dedup_by(|later, first| later.0 == first.0);
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

/// Serialize a response review deterministically (sorted keys).
///
/// Written by hand rather than through kube's derive: its audit annotations
/// live in a `HashMap` (random order; [`Answer`] keeps them sorted apart)
/// and its patch serializes as a number array, while Go's `[]byte`
/// convention is a base64 string. The bytes are
/// what serde_json writes for the same review with sorted keys (a property
/// test holds them to it); its string escaping, a byte-by-byte table walk,
/// cost a leader's denial more instructions than the whole bare answer.
pub fn encode(answer: &Answer<'_>) -> Vec<u8> {
    let response = &answer.response;
    let notes = &answer.audit_annotations;
    let warnings = &answer.warnings;
    let patch = (response.patch.as_ref())
        .map(|patch| base64::engine::general_purpose::STANDARD.encode(patch));
    // Sized for the texts up front: a denial runs to kilobytes.
    let texts = answer.message.len()
        + warnings.iter().map(|w| w.len()).sum::<usize>()
        + (notes.iter())
            .map(|(k, v)| k.len() + v.len() + 6)
            .sum::<usize>()
        + patch.as_ref().map_or(0, String::len)
        + response.uid.len();
    let mut out = String::with_capacity(texts + texts / 8 + 192);
    // Writing to a `String` cannot fail.
    let _ = write_review(&mut out, answer, patch.as_deref());
    out.into_bytes()
}

/// Members in alphabetical order at every level.
fn write_review(out: &mut String, answer: &Answer<'_>, patch: Option<&str>) -> std::fmt::Result {
    let (response, notes, warnings) = (
        &answer.response,
        &answer.audit_annotations,
        &answer.warnings,
    );
    out.push_str("{\"apiVersion\":");
    write_string(out, META_API_VERSION_V1)?;
    out.push_str(",\"kind\":");
    write_string(out, META_KIND)?;
    out.push_str(",\"response\":{\"allowed\":");
    out.push_str(if response.allowed { "true" } else { "false" });
    if !notes.is_empty() {
        out.push_str(",\"auditAnnotations\":{");
        for (i, (key, value)) in notes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_string(out, key)?;
            out.push(':');
            write_string(out, value)?;
        }
        out.push('}');
    }
    if let Some(patch) = patch {
        out.push_str(",\"patch\":");
        write_string(out, patch)?;
        out.push_str(",\"patchType\":\"JSONPatch\"");
    }
    if !response.allowed {
        let status = &response.result;
        out.push_str(",\"status\":{");
        if status.code != 0 {
            out.push_str("\"code\":");
            push_u16(out, status.code);
            out.push(',');
        }
        for (name, text) in [("message", answer.message), ("reason", &status.reason)] {
            if !text.is_empty() {
                write_string(out, name)?;
                out.push(':');
                write_string(out, text)?;
                out.push(',');
            }
        }
        out.push_str("\"status\":\"Failure\"}");
    }
    out.push_str(",\"uid\":");
    write_string(out, &response.uid)?;
    if !warnings.is_empty() {
        out.push_str(",\"warnings\":[");
        for (i, warning) in warnings.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_string(out, warning)?;
        }
        out.push(']');
    }
    out.push_str("}}");
    Ok(())
}

/// Decimal digits, as `write!` would give them without its machinery.
fn push_u16(out: &mut String, value: u16) {
    let mut digits = [0u8; 5];
    let mut rest = value;
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // ASCII digits.
    out.push_str(std::str::from_utf8(&digits[start..]).unwrap_or_default());
}

#[cfg(test)]
mod tests;
