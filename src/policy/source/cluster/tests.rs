use serde_json::json;

use super::*;
use crate::policy::crd::RawPolicySpec;

fn object(generation: i64, action: &str) -> ForceDeletionPolicy {
    let spec = json!({"match": {"intents": ["ForceDelete"]}, "action": action, "message": "m"});
    let mut object = ForceDeletionPolicy::new(
        "p",
        RawPolicySpec {
            fields: spec.as_object().cloned().unwrap_or_default(),
        },
    );
    object.metadata.uid = Some("u".into());
    object.metadata.generation = Some(generation);
    object
}

#[test]
fn nothing_is_in_force_until_the_first_list_completes() {
    let metrics = PolicyMetrics::default();
    let live = Live::new(metrics.clone());
    let changes = live.subscribe();
    assert_eq!(live.policies().load().loading(), Some(NOT_LISTED));
    assert!(!live.handle(Event::Init));
    assert!(!live.handle(Event::InitApply(object(1, "Deny"))));
    assert!(live.policies().load().loading().is_some());
    assert!(live.handle(Event::InitDone), "the first list completes");
    assert_eq!(live.policies().load().names(), ["p"]);
    assert!(changes.has_changed().unwrap_or(false));
    assert_eq!(metrics.reload_counts(), (1, 0));

    // A generation that does not compile is counted; the set stays.
    assert!(!live.handle(Event::Apply(object(2, "Block"))));
    assert_eq!(metrics.reload_counts(), (1, 1));
    assert_eq!(live.policies().load().names(), ["p"]);
    live.handle(Event::Delete(object(2, "Block")));
    assert!(live.policies().load().is_empty());
    assert!(live.policies().load().loading().is_none());
}
