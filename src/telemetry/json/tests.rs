use serde_json::Value;

use super::*;
use crate::telemetry::captured::Captured;

/// Events with every kind of field, including text that needs escaping.
fn emit_events() {
    let object = "pods db/postgres-0";
    tracing::info!(
        uid = %"705ab4f5-6393-11e8-b7cc-42010a800002",
        endpoint = "validate",
        object = %object,
        decision = "denied",
        break_glass = false,
        dry_run = true,
        duration_ms = 0.042,
        answered = 3u64,
        delta = -7i64,
        "admission decision"
    );
    tracing::warn!(
        error = %"line one\nline \"two\"\t\\ \u{1} \u{8} \u{c} \r é 日本",
        ratio = f64::NAN,
        whole = 2.0,
        big = 1.5e300,
        "could not write cleanup record: {}",
        "quoted \"reason\""
    );
    tracing::error!(nested = ?Some(vec!["a", "b"]), "");
}

fn lines_of(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Field for field, the lines tracing-subscriber's own JSON formatter
/// writes with the settings `init` used before, timestamps aside.
#[test]
fn lines_match_tracing_subscribers_json_format() {
    let ours = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(ours.clone())
        .event_format(JsonLines)
        .finish();
    tracing::subscriber::with_default(subscriber, emit_events);

    let theirs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(theirs.clone())
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .finish();
    tracing::subscriber::with_default(subscriber, emit_events);

    let (ours, theirs) = (ours.text(), theirs.text());
    let (mut ours_lines, mut theirs_lines) = (lines_of(&ours), lines_of(&theirs));
    assert_eq!(ours_lines.len(), 3, "{ours}");
    assert_eq!(ours_lines.len(), theirs_lines.len());
    for (mine, reference) in ours_lines.iter_mut().zip(&mut theirs_lines) {
        let stamp = mine["timestamp"].as_str().expect("timestamp").to_owned();
        let parsed: Timestamp = stamp.parse().expect("RFC 3339");
        let age = Timestamp::now().duration_since(parsed);
        assert!(age.as_secs() < 60, "timestamp {stamp} is not now");
        assert_eq!(stamp.len(), "2026-12-05T07:30:00.123456Z".len(), "{stamp}");
        mine.as_object_mut().unwrap().remove("timestamp");
        reference.as_object_mut().unwrap().remove("timestamp");
        assert_eq!(mine, reference);
    }
    // Byte for byte once the timestamps are cut out: the same key order,
    // escapes and number formats, for collectors and for humans alike.
    let without_timestamp = |line: &str| -> String {
        let (_, rest) = line
            .split_once("\",\"level\"")
            .expect("level after timestamp");
        rest.to_owned()
    };
    for (mine, reference) in ours.lines().zip(theirs.lines()) {
        assert_eq!(without_timestamp(mine), without_timestamp(reference));
    }
    assert_eq!(ours_lines[1]["ratio"], Value::Null);
    assert_eq!(ours_lines[1]["whole"], 2.0);
    assert_eq!(
        ours_lines[1]["error"],
        "line one\nline \"two\"\t\\ \u{1} \u{8} \u{c} \r é 日本"
    );
}

/// Half a microsecond before 1970 shows as 23:59:59.999999 of the day
/// before, not as a second whose fraction is zero.
#[test]
fn cached_second_before_1970() {
    let mut clock = SecondCache::default();
    for (second, nano) in [(-1, -500), (-1, 0), (0, 0), (-1, -999_999_999)] {
        let now = Timestamp::new(second, nano).expect("in range");
        let mut out = String::new();
        clock.write(&mut out, now);
        assert_eq!(out, format!("{now:.6}"));
    }
}

proptest::proptest! {
    /// The cached second plus the microseconds reads as jiff writes the
    /// whole timestamp, for timestamps in the same second, the next one
    /// and far apart (before 1970 included).
    #[test]
    fn cached_second_writes_what_jiff_writes(
        seconds in proptest::collection::vec(-5_000_000_000i64..253_000_000_000, 1..6),
        nanos in proptest::collection::vec(0i32..1_000_000_000, 6),
    ) {
        let mut clock = SecondCache::default();
        for (i, second) in seconds.iter().enumerate() {
            // Each second twice and its neighbour once, so the cache hits.
            for (second, nano) in [(*second, nanos[i]), (*second, nanos[5 - i]), (second + 1, nanos[i])] {
                // jiff wants the fraction's sign to be the second's.
                let nano = if second < 0 { -nano } else { nano };
                let now = Timestamp::new(second, nano).expect("in range");
                let mut out = String::new();
                clock.write(&mut out, now);
                proptest::prop_assert_eq!(out, format!("{now:.6}"));
            }
        }
    }
}

proptest::proptest! {
    /// Floats as serde_json writes them, NaN and infinities included.
    #[test]
    fn floats_as_serde_json_writes_them(
        value in proptest::prop_oneof![
            proptest::num::f64::ANY,
            proptest::strategy::Strategy::prop_map(0u64..10_000_000, |micros| micros as f64 / 1000.0),
        ]
    ) {
        let mut out = String::new();
        push_f64(&mut out, value);
        proptest::prop_assert_eq!(out, serde_json::to_string(&value).expect("f64 serializes"));
    }
}
