use super::*;

const LIMIT: Duration = Duration::from_secs(300);

#[test]
fn unknown_until_the_first_list() {
    let t0 = Instant::now();
    let mut state = KindState::new(Kind::Pod, true);
    let err = state.available(t0, LIMIT).expect_err("not synced");
    assert_eq!(err.kind, "Pod");
    assert!(err.reason.contains("not synced"));
    state.failed("pods is forbidden: User \"system:serviceaccount:forcegate:forcegate\" cannot list resource \"pods\"".into());
    let err = state.available(t0, LIMIT).expect_err("not synced");
    assert!(err.reason.contains("forbidden"), "{}", err.reason);
    state.listed(t0);
    assert!(state.available(t0, LIMIT).is_ok());
    assert_eq!(state.status(t0, LIMIT, 7).objects, 7);
    assert_eq!(state.status(t0, LIMIT, 7).watch_errors, 1);
}

#[test]
fn stale_after_the_limit_without_contact() {
    let t0 = Instant::now();
    let mut state = KindState::new(Kind::Lease, true);
    state.listed(t0);
    assert!(
        state
            .available(t0 + Duration::from_secs(300), LIMIT)
            .is_ok(),
        "at the limit"
    );
    state.failed("connection refused".into());
    let later = t0 + Duration::from_secs(301);
    let err = state.available(later, LIMIT).expect_err("stale");
    assert!(
        err.reason.contains("301s") && err.reason.contains("connection refused"),
        "{}",
        err.reason
    );
    let status = state.status(later, LIMIT, 0);
    assert!(status.stale && status.synced);
    assert_eq!(status.seconds_since_event, Some(301.0));
    // A bookmark is contact: fresh again, still synced.
    state.contact(later);
    assert!(state.available(later, LIMIT).is_ok());
    assert!(state.status(later, LIMIT, 0).last_error.is_none());
}

#[test]
fn unwatched_kinds_are_available_and_say_so() {
    let t0 = Instant::now();
    let state = KindState::new(Kind::ConfigMap, false);
    assert!(
        state
            .available(t0 + Duration::from_secs(10_000), LIMIT)
            .is_ok()
    );
    let status = state.status(t0, LIMIT, 0);
    assert!(status.synced && !status.stale);
    assert!(status.last_error.is_some_and(|e| e.contains("not watched")));
}
