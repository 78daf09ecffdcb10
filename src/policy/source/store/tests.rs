use serde_json::json;

use super::*;
use crate::policy::crd::RawPolicySpec;

fn policy(name: &str, uid: &str, generation: i64, action: &str) -> ForceDeletionPolicy {
    let spec = json!({
        "match": {"intents": ["ForceDelete"]},
        "action": action,
        "message": "m",
    });
    let mut object = ForceDeletionPolicy::new(
        name,
        RawPolicySpec {
            fields: spec.as_object().cloned().unwrap_or_default(),
        },
    );
    object.metadata.uid = Some(uid.into());
    object.metadata.generation = Some(generation);
    object
}

fn in_force(store: &Store) -> Vec<String> {
    store
        .set()
        .policies()
        .iter()
        .map(|p| format!("{}:{:?}", p.name, p.rules[0].action))
        .collect()
}

#[test]
fn a_bad_generation_keeps_the_last_good_one_in_force() {
    let mut store = Store::default();
    store.relist();
    assert!(store.apply(policy("a", "u1", 1, "Deny")).set);
    assert!(!store.is_synced());
    assert!(store.listed().set, "the first list puts the set in force");
    assert_eq!(in_force(&store), ["a:Deny"]);

    let changed = store.apply(policy("a", "u1", 2, "Block"));
    assert!(!changed.set);
    let (name, error) = changed.failed.expect("a failure");
    assert_eq!(name, "a");
    assert!(
        error.contains("spec.action: unknown variant `Block`"),
        "{error}"
    );
    assert_eq!(in_force(&store), ["a:Deny"]);
    let report = &store.report()["a"];
    assert_eq!((report.generation, report.observed), (Some(1), 2));
    assert!(report.error.is_some());

    // A status write (same generation) compiles nothing.
    assert_eq!(
        store.apply(policy("a", "u1", 2, "Block")),
        Changed::default()
    );

    assert!(store.apply(policy("a", "u1", 3, "Warn")).set);
    assert_eq!(in_force(&store), ["a:Warn"]);
    assert_eq!(store.report()["a"].error, None);
}

#[test]
fn a_recreated_object_starts_over_and_a_deleted_one_stops_applying() {
    let mut store = Store::default();
    store.apply(policy("a", "u1", 5, "Deny"));
    // Same name, new object: its generation 1 is new, however low.
    let changed = store.apply(policy("a", "u2", 1, "Block"));
    assert!(changed.failed.is_some());
    assert!(in_force(&store).is_empty(), "no good generation of u2");
    assert!(store.apply(policy("b", "u3", 1, "Warn")).set);
    assert!(store.delete("b").set);
    assert!(!store.delete("b").set);
    assert!(in_force(&store).is_empty());
}

#[test]
fn a_relist_drops_what_was_deleted_meanwhile() {
    let mut store = Store::default();
    store.relist();
    store.apply(policy("a", "u1", 1, "Deny"));
    store.apply(policy("b", "u2", 1, "Warn"));
    store.listed();
    store.relist();
    store.apply(policy("b", "u2", 1, "Warn"));
    assert!(store.listed().set);
    assert_eq!(in_force(&store), ["b:Warn"]);
    assert!(store.is_synced());
}
