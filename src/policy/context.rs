//! The JSON document conditions and templates read.
//!
//! `{request, object, oldObject, facts, intent, target, requester, record,
//! settings, now}`: the AdmissionRequest as the API server sent it, the
//! facts, and the classified intent with a few conveniences (`intent.type`,
//! `intent.removedFinalizers`, ...) so policies never depend on how the
//! intent enum happens to serialize.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::EvalInput;
use super::catalog;
use crate::facts::Facts;
use crate::intent::IntentKind;

/// Build the evaluation context. Serialization of these types cannot fail
/// (string keys only); a failure would show up as `null`, never a panic.
/// Without `with_request`, `request`, `object` and `oldObject` are `null`:
/// no loaded policy reads them.
pub fn build(input: &EvalInput<'_>, with_request: bool) -> Value {
    let request = if with_request {
        serde_json::to_value(input.request).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let object = request.get("object").cloned().unwrap_or(Value::Null);
    let old_object = request.get("oldObject").cloned().unwrap_or(Value::Null);
    let facts = serde_json::to_value(input.facts).unwrap_or(Value::Null);
    let intent = intent_json(input);
    let target = intent.get("target").cloned().unwrap_or(Value::Null);
    let requester = intent.get("requester").cloned().unwrap_or(Value::Null);
    // The record is named after the object's UID; an eviction's request
    // carries no pod, so fall back to the pod the facts found.
    let record = input
        .intent
        .target
        .uid
        .as_deref()
        .or(input.facts.pod.as_ref().map(|p| p.uid.as_str()))
        .filter(|uid| !uid.is_empty())
        .map(crate::cleanup::record_name);
    // Moved in rather than interpolated with `json!`, which re-serializes
    // (deep-copies) every `Value` it is given: a tenth of a decision's time.
    let mut context = Map::with_capacity(10);
    context.insert("request".into(), request);
    context.insert("object".into(), object);
    context.insert("oldObject".into(), old_object);
    context.insert("facts".into(), facts);
    context.insert("intent".into(), intent);
    context.insert("target".into(), target);
    context.insert("requester".into(), requester);
    context.insert("record".into(), record.map_or(Value::Null, Value::String));
    context.insert(
        "settings".into(),
        json!({ "breakGlassGroup": input.settings.break_glass_group }),
    );
    context.insert("now".into(), Value::String(input.now.to_string()));
    Value::Object(context)
}

fn intent_json(input: &EvalInput<'_>) -> Value {
    let intent = input.intent;
    let mut map = match serde_json::to_value(intent) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    map.insert("type".into(), intent.kind.name().into());
    let (removed, deleting, terminating) = match &intent.kind {
        IntentKind::FinalizerRemoval { removed, deleting } => {
            (removed.clone(), Some(*deleting), None)
        }
        IntentKind::NamespaceFinalize { removed } => (removed.clone(), None, None),
        IntentKind::ForceDelete {
            already_terminating,
        } => (Vec::new(), None, Some(*already_terminating)),
        _ => (Vec::new(), None, None),
    };
    map.insert("removedFinalizers".into(), json!(removed));
    if let Some(deleting) = deleting {
        map.insert("objectDeleting".into(), deleting.into());
    }
    if let Some(terminating) = terminating {
        map.insert("alreadyTerminating".into(), terminating.into());
    }
    Value::Object(map)
}

/// Unknown fact groups, keyed by normalized group name, with the reason.
pub fn unknown_groups(facts: &Facts) -> BTreeMap<String, String> {
    facts
        .unknown
        .iter()
        .map(|(group, why)| (catalog::normalize_group(group), why.to_string()))
        .collect()
}
