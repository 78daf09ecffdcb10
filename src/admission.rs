//! AdmissionReview v1 in and out: strict decoding, deterministic encoding.

use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse};

use crate::decision::Decision;

/// A decoded admission request; object and oldObject kept dynamic.
pub type Request = AdmissionRequest<DynamicObject>;

/// Why a body is not an AdmissionReview we can answer. Maps to a 4xx.
#[derive(Debug, thiserror::Error)]
pub enum BadReview {
    #[error("body is not valid JSON: {0}")]
    NotJson(String),
}

impl BadReview {
    /// Short label for the `reason` metric label.
    pub fn reason(&self) -> &'static str {
        match self {
            BadReview::NotJson(_) => "not_json",
        }
    }
}

pub fn decode(_body: &[u8]) -> Result<Request, BadReview> {
    todo!("issue 2")
}

/// Build the response for `request` from `decision` (+ an optional JSON patch).
pub fn respond(
    _request: &Request,
    _decision: &Decision,
    _patch: Option<json_patch::Patch>,
) -> AdmissionResponse {
    todo!("issue 2")
}

/// Serialize a response review deterministically (sorted keys).
pub fn encode(_response: &AdmissionResponse) -> Vec<u8> {
    todo!("issue 2")
}
