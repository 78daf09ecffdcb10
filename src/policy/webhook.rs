//! `/validate-policy`: a ForceDeletionPolicy that the loader would refuse
//! is refused at `kubectl apply`, with the field and the reason.
//!
//! The API server has already enforced the CRD's schema (types, enums,
//! CEL) by the time it calls; this adds what only the loader knows: facts
//! against their types, JSONPaths, regular expressions, templates. The
//! webhook's failurePolicy is Ignore, so policies can still be managed
//! while forcegate is down; an object that got in then is reported
//! `Ready=False` and its last good generation stays in force.

use kube::core::admission::{AdmissionResponse, Operation};

use super::model::{API_VERSION, KIND};
use super::object;
use crate::admission::{self, BadReview};

/// The answer, as sent, and whether it allowed the change.
#[derive(Debug)]
pub struct Reviewed {
    pub body: Vec<u8>,
    pub allowed: bool,
}

/// Check the object of a CREATE or UPDATE; anything else is allowed (it is
/// not this webhook's to judge).
pub fn review(body: &[u8]) -> Result<Reviewed, BadReview> {
    let request = admission::decode(body)?;
    let mut response = AdmissionResponse::from(&request);
    let ours = request.kind.kind == KIND
        && format!("{}/{}", request.kind.group, request.kind.version) == API_VERSION;
    let changed = matches!(request.operation, Operation::Create | Operation::Update);
    if let (true, true, Some(object)) = (ours, changed, &request.object) {
        let value = serde_json::to_value(object)
            .map_err(|err| BadReview::Malformed(format!("object: {err}")))?;
        if let Err(problems) = object::compile(&value) {
            let name = object.metadata.name.as_deref().unwrap_or_default();
            response = response.deny(format!(
                "{KIND} {name} is invalid (forcegate lint reports the same):\n{}",
                object::describe(&problems)
            ));
            response.result.code = 422;
            response.result.reason = "Invalid".into();
        }
    }
    let allowed = response.allowed;
    let body = serde_json::to_vec(&response.into_review())
        .map_err(|err| BadReview::Malformed(format!("response: {err}")))?;
    Ok(Reviewed { body, allowed })
}

#[cfg(test)]
mod tests;
