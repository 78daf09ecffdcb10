use serde_json::json;

use super::*;

fn spec(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn inline() -> Map<String, Value> {
    spec(json!({
        "match": {"intents": ["ForceDelete", "Eviction"]},
        "action": "Deny",
        "message": "m",
    }))
}

fn report(replica: &str, generation: Option<i64>, observed: i64, error: Option<&str>) -> Report {
    let compiled = Compiled {
        uid: "u1".into(),
        generation,
        observed,
        error: error.map(str::to_owned),
    };
    Report {
        replica: replica.into(),
        time: "2025-01-01T00:00:00Z".into(),
        policies: [("p".to_owned(), compiled)].into(),
    }
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + seconds).expect("timestamp")
}

fn status_of(replicas: &[Report], generation: i64, current: Option<&PolicyStatus>) -> PolicyStatus {
    computed(replicas, generation, &Permissions::Granted, current, at(10))
}

/// `compute` for policy `p` (uid `u1`, the inline spec) at `generation`.
fn computed(
    replicas: &[Report],
    generation: i64,
    permissions: &Permissions,
    current: Option<&PolicyStatus>,
    now: Timestamp,
) -> PolicyStatus {
    let spec = inline();
    let subject = Subject {
        uid: "u1",
        generation,
        spec: &spec,
    };
    compute(subject, "p", replicas, permissions, current, now)
}

fn ready(status: &PolicyStatus) -> (&str, &str, &str) {
    let c = status
        .conditions
        .iter()
        .find(|c| c.type_ == READY)
        .expect("Ready");
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

#[test]
fn ready_when_every_serving_replica_has_the_generation_in_force() {
    let replicas = [
        report("fg-a", Some(3), 3, None),
        report("fg-b", Some(3), 3, None),
    ];
    let status = status_of(&replicas, 3, None);
    assert_eq!(
        ready(&status),
        (
            "True",
            "InForce",
            "generation 3 is in force on 2 replicas: fg-a, fg-b"
        )
    );
    assert_eq!(status.observed_generation, Some(3));
    assert_eq!(status.intents.as_deref(), Some("ForceDelete,Eviction"));
    assert_eq!(status.actions.as_deref(), Some("Deny"));
    assert_eq!(status.on_unknown.as_deref(), Some("Deny"));
    let names: Vec<(&str, Option<i64>)> = status
        .replicas
        .iter()
        .map(|r| (r.name.as_str(), r.generation))
        .collect();
    assert_eq!(names, [("fg-a", Some(3)), ("fg-b", Some(3))]);
}

#[test]
fn pending_names_the_replicas_that_have_not_compiled_it() {
    let mut recreated = report("fg-c", Some(9), 9, None);
    recreated.policies.get_mut("p").expect("p").uid = "old".into();
    let replicas = [
        report("fg-a", Some(4), 4, None),
        report("fg-b", Some(3), 3, None),
        recreated,
        Report {
            replica: "fg-d".into(),
            ..Report::default()
        },
    ];
    let status = status_of(&replicas, 4, None);
    assert_eq!(
        ready(&status),
        (
            "False",
            "Pending",
            "waiting for fg-b, fg-c, fg-d to compile generation 4"
        )
    );
}

#[test]
fn a_generation_that_does_not_compile_is_not_ready_and_says_why() {
    let error = "spec.conditions[0].path: invalid JSONPath";
    let replicas = [
        report("fg-a", Some(1), 2, Some(error)),
        report("fg-b", Some(1), 1, None),
    ];
    let status = status_of(&replicas, 2, None);
    let (state, reason, message) = ready(&status);
    assert_eq!((state, reason), ("False", "CompileFailed"));
    assert!(
        message.contains("generation 2 does not compile on fg-a"),
        "{message}"
    );
    assert!(message.ends_with(error), "{message}");
    assert_eq!(status.replicas[0].generation, Some(1));
    assert_eq!(status.replicas[0].error.as_deref(), Some(error));
    assert_eq!(status.replicas[1].error, None);
}

#[test]
fn no_replica_is_unknown() {
    let status = status_of(&[], 1, None);
    assert_eq!(ready(&status).0, "Unknown");
    assert!(status.replicas.is_empty());
}

/// Recomputing an unchanged state gives an equal status (no write); a
/// change of a condition's status moves its transition time.
#[test]
fn transition_times_hold_while_the_status_does() {
    let replicas = [report("fg-a", Some(1), 1, None)];
    let first = status_of(&replicas, 1, None);
    let granted = Permissions::Granted;
    let again = computed(&replicas, 1, &granted, Some(&first), at(99));
    assert_eq!(again, first);
    let edited = computed(&replicas, 2, &granted, Some(&first), at(99));
    assert_ne!(edited, first);
    let transition = |s: &PolicyStatus, t: &str| {
        s.conditions
            .iter()
            .find(|c| c.type_ == t)
            .map(|c| c.last_transition_time.0)
    };
    assert_eq!(transition(&edited, READY), Some(at(99)));
    assert_eq!(
        transition(&edited, PERMISSIONS_GRANTED),
        transition(&first, PERMISSIONS_GRANTED)
    );
}

#[test]
fn missing_permissions_name_the_resources() {
    let missing = Permissions::Missing(vec!["endpointslices.discovery.k8s.io".into()]);
    let status = computed(&[], 1, &missing, None, at(0));
    let granted = &status.conditions[1];
    assert_eq!(granted.type_, PERMISSIONS_GRANTED);
    assert_eq!(
        (granted.status.as_str(), granted.reason.as_str()),
        ("False", "Forbidden")
    );
    assert!(
        granted
            .message
            .contains("cannot list/watch endpointslices.discovery.k8s.io"),
        "{}",
        granted.message
    );
}

#[test]
fn the_summary_lists_every_rule() {
    let spec = spec(json!({
        "match": {"intents": ["FinalizerRemoval"]},
        "onUnknown": "Warn",
        "rules": [
            {"name": "a", "action": "Deny", "message": "m"},
            {"name": "b", "action": "Record", "onUnknown": "Ignore", "message": "m"},
            {"name": "c", "action": "Deny", "message": "m"},
        ],
    }));
    assert_eq!(
        summary(&spec),
        (
            Some("FinalizerRemoval".into()),
            Some("Deny,Record".into()),
            Some("Warn,Ignore".into())
        )
    );
}

#[test]
fn long_errors_are_cut_on_a_character_boundary() {
    let long = "é".repeat(MAX_ERROR);
    let short = Compiled::short(&long);
    assert!(short.len() <= MAX_ERROR && short.ends_with('…'));
    assert_eq!(Compiled::short("short"), "short");
}
