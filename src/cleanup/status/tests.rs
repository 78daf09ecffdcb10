use super::*;

fn item(name: &str, state: ItemState) -> ChecklistItem {
    ChecklistItem {
        name: name.into(),
        state,
        message: format!("{name} message"),
        command: None,
    }
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("timestamp")
}

#[test]
fn unchanged_evaluation_is_not_a_change() {
    let items = vec![item("object-gone", ItemState::Pending)];
    let first = next(
        &ForceDeletionStatus::default(),
        Phase::Verifying,
        items.clone(),
        false,
        at("2026-03-02T10:00:00Z"),
    );
    let second = next(
        &first,
        Phase::Verifying,
        items,
        false,
        at("2026-03-02T10:05:00Z"),
    );
    assert!(!changed(&first, &second), "{first:#?}\n{second:#?}");
    assert_eq!(
        second.conditions[0].last_transition_time.0,
        at("2026-03-02T10:00:00Z")
    );
}

#[test]
fn conditions_track_transitions() {
    let t0 = at("2026-03-02T10:00:00Z");
    let t1 = at("2026-03-02T10:20:00Z");
    let t2 = at("2026-03-02T10:30:00Z");
    let pending = next(
        &ForceDeletionStatus::default(),
        Phase::Verifying,
        vec![item("a", ItemState::Pending)],
        false,
        t0,
    );
    assert_eq!(pending.conditions[0].status, "False");
    assert_eq!(pending.conditions[0].reason, "ChecksPending");
    assert_eq!(pending.conditions[0].message, "open: a");
    assert_eq!(pending.conditions[1].status, "False");

    let late = next(
        &pending,
        Phase::NeedsAttention,
        vec![item("a", ItemState::Pending)],
        true,
        t1,
    );
    assert!(changed(&pending, &late));
    assert_eq!(late.conditions[1].type_, CONDITION_DEADLINE);
    assert_eq!(late.conditions[1].status, "True");
    assert_eq!(late.conditions[1].last_transition_time.0, t1);
    assert_eq!(late.conditions[0].last_transition_time.0, t0);

    let clean = next(
        &late,
        Phase::Clean,
        vec![item("a", ItemState::Ok), item("m", ItemState::Manual)],
        true,
        t2,
    );
    assert_eq!(clean.conditions[0].status, "True");
    assert_eq!(clean.conditions[0].reason, "Verified");
    assert_eq!(clean.conditions[0].last_transition_time.0, t2);
    // Clean after the deadline is still clean: the deadline no longer applies.
    assert_eq!(clean.conditions[1].status, "False");
}

#[test]
fn failed_item_is_named_in_the_condition() {
    let status = next(
        &ForceDeletionStatus::default(),
        Phase::NeedsAttention,
        vec![
            item("no-split-brain", ItemState::Failed),
            item("x", ItemState::Ok),
        ],
        false,
        Timestamp::UNIX_EPOCH,
    );
    assert_eq!(status.conditions[0].reason, "CheckFailed");
    assert_eq!(status.conditions[0].message, "open: no-split-brain");
}

#[test]
fn requeue_grows_with_age_and_stops_at_the_deadline() {
    let min = Duration::from_secs(5);
    let max = Duration::from_secs(120);
    let deadline = Duration::from_secs(900);
    let young = requeue_after(
        Phase::Verifying,
        Duration::from_secs(10),
        deadline,
        min,
        max,
    );
    let older = requeue_after(
        Phase::Verifying,
        Duration::from_secs(400),
        deadline,
        min,
        max,
    );
    let old = requeue_after(
        Phase::Verifying,
        Duration::from_secs(5000),
        Duration::from_secs(9000),
        min,
        max,
    );
    assert_eq!(young, Some(min));
    assert_eq!(older, Some(Duration::from_secs(50)));
    assert_eq!(old, Some(max));
    // 10 s before the deadline: look again exactly then.
    assert_eq!(
        requeue_after(
            Phase::Verifying,
            Duration::from_secs(890),
            deadline,
            min,
            max
        ),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        requeue_after(Phase::Clean, Duration::ZERO, deadline, min, max),
        None
    );
    assert_eq!(
        requeue_after(Phase::NeedsAttention, Duration::ZERO, deadline, min, max),
        Some(max)
    );
}

#[test]
fn error_backoff_doubles_up_to_the_cap() {
    let min = Duration::from_secs(5);
    let max = Duration::from_secs(120);
    let delays: Vec<u64> = (0..7)
        .map(|n| error_backoff(n, min, max).as_secs())
        .collect();
    assert_eq!(delays, [5, 10, 20, 40, 80, 120, 120]);
    assert_eq!(error_backoff(u32::MAX, min, max), max);
}

#[test]
fn event_note_names_open_items_and_fits_the_limit() {
    let items = vec![
        item("no-split-brain", ItemState::Failed),
        item("node/sandbox", ItemState::Manual),
    ];
    let note = event_note(Phase::NeedsAttention, &items);
    assert_eq!(note, "no-split-brain (failed): no-split-brain message");
    let long: Vec<_> = (0..100)
        .map(|i| item(&format!("volume-detached/pvc-{i}"), ItemState::Pending))
        .collect();
    let note = event_note(Phase::Verifying, &long);
    assert!(note.len() <= 1024 && note.ends_with('…'), "{}", note.len());
    let clean = event_note(Phase::Clean, &items[1..]);
    assert!(clean.contains("1 node-side step"), "{clean}");
}
