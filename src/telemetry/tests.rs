use super::*;
use captured::Captured;

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
