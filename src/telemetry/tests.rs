use std::fmt;

use super::*;
use captured::Captured;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

struct FixedTime;

impl FormatTime for FixedTime {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        w.write_str("2026-12-07T07:00:00.123456Z")
    }
}

/// [`JsonLine`] writes the bytes tracing-subscriber's own JSON formatter
/// writes (flattened, no spans) for events of every field type, escapes
/// and numbers included, inside a span.
#[test]
fn json_line_writes_what_the_library_formatter_writes() {
    let emit = || {
        let span = tracing::info_span!("request", uid = "abc");
        let _entered = span.enter();
        tracing::info!(
            uid = "705ab4f5",
            endpoint = "/validate",
            decision = "denied",
            break_glass = false,
            duration_ms = 0.042,
            count = 3u64,
            delta = -7i64,
            "admission decision"
        );
        tracing::warn!(
            error = %"line one\n\"two\"\t\u{1}é",
            object = ?("pod", 1),
            "reload failed"
        );
        let err = std::io::Error::other("disk full");
        tracing::error!(
            error = &err as &(dyn std::error::Error + 'static),
            big = 1e21,
            nan = f64::NAN,
            "write failed"
        );
        tracing::info!(answer = 42);
    };
    let ours = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(ours.clone())
        .fmt_fields(JsonFields::new())
        .event_format(JsonLine { timer: FixedTime })
        .finish();
    tracing::subscriber::with_default(subscriber, emit);
    let library = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(library.clone())
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .with_timer(FixedTime)
        .finish();
    tracing::subscriber::with_default(subscriber, emit);
    assert_eq!(ours.text().lines().count(), 4, "{}", ours.text());
    assert_eq!(ours.text(), library.text());
}

/// One object per line, fields at the top level in the documented
/// order (docs/operations.md, "Logs"), escapes and numbers as JSON.
#[test]
fn json_lines_have_the_documented_shape() {
    let sink = Captured::default();
    let subscriber = json_lines(tracing_subscriber::fmt().with_writer(sink.clone())).finish();
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!(
            uid = "705ab4f5",
            decision = "denied",
            break_glass = false,
            duration_ms = 0.042,
            error = %"line one\n\"two\"",
            "admission decision"
        );
    });
    let text = sink.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let line: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(lines[0]).expect("a JSON object");
    let keys: Vec<&str> = line.keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    let mut expected = vec![
        "break_glass",
        "decision",
        "duration_ms",
        "error",
        "level",
        "message",
        "target",
        "timestamp",
        "uid",
    ];
    expected.sort_unstable();
    assert_eq!(sorted, expected, "{text}");
    assert!(lines[0].starts_with("{\"timestamp\":\""), "{text}");
    assert!(lines[0].contains("\",\"level\":\"INFO\","), "{text}");
    assert!(
        lines[0].ends_with(",\"target\":\"forcegate::telemetry::tests\"}"),
        "{text}"
    );
    assert_eq!(line["message"], "admission decision");
    assert_eq!(line["break_glass"], false);
    assert_eq!(line["duration_ms"], 0.042);
    assert_eq!(line["error"], "line one\n\"two\"");
    let stamp = line["timestamp"].as_str().expect("timestamp");
    assert_eq!(stamp.len(), "2026-12-05T07:30:00.123456Z".len(), "{stamp}");
}
