use super::*;

fn report(replica: &str, time: &str) -> Report {
    Report {
        replica: replica.into(),
        time: time.into(),
        policies: BTreeMap::new(),
    }
}

#[test]
fn a_report_unchanged_for_the_expiry_is_a_replica_gone() {
    let start = Instant::now();
    let mut roster = Roster::default();
    let both = |a: &str, b: &str| {
        [
            ("k/a".to_owned(), report("fg-a", a)),
            ("k/b".to_owned(), report("fg-b", b)),
        ]
        .into()
    };
    roster.update(both("t0", "t0"), start);
    let later = start + EXPIRY - Duration::from_secs(1);
    roster.update(both("t1", "t0"), later);
    let names = |r: &[Report]| r.iter().map(|r| r.replica.clone()).collect::<Vec<_>>();
    assert_eq!(names(&roster.serving(later)), ["fg-a", "fg-b"]);
    let past = start + EXPIRY;
    assert_eq!(names(&roster.serving(past)), ["fg-a"]);
    assert_eq!(roster.expired(past), ["k/b"]);
    roster.update([("k/a".to_owned(), report("fg-a", "t1"))].into(), past);
    assert!(roster.expired(past).is_empty());
}

#[test]
fn a_status_patch_clears_what_the_new_status_leaves_out() {
    let old = PolicyStatus {
        intents: Some("ForceDelete".into()),
        actions: Some("Deny".into()),
        ..PolicyStatus::default()
    };
    let new = PolicyStatus {
        intents: Some("Eviction".into()),
        ..PolicyStatus::default()
    };
    assert_eq!(
        status_patch(Some(&old), &new),
        serde_json::json!({"status": {"intents": "Eviction", "actions": null}})
    );
}
