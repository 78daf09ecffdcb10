use super::*;

#[test]
fn exposes_the_issue_metrics_by_name() {
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    metrics.decided("validate", "ForceDelete", false);
    metrics.observe_duration("validate", 0.002);
    metrics.bad_request("not_json");
    metrics.tls.loaded(1_900_000_000);
    metrics.tls.reload(true);
    let text = render(&registry).expect("encodes");
    for needle in [
        "forcegate_build_info{version=\"",
        "forcegate_admission_requests_total{endpoint=\"validate\",intent=\"ForceDelete\",decision=\"denied\"} 1",
        "forcegate_admission_request_duration_seconds_bucket{le=\"0.0025\",endpoint=\"validate\"} 1",
        "forcegate_bad_requests_total{reason=\"not_json\"} 1",
        "forcegate_tls_certificate_expiry_timestamp_seconds 1900000000",
        "forcegate_tls_reloads_total{result=\"success\"} 1",
        "# EOF",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

/// Each series counts only its own requests (n + 1 for the n-th
/// combination), exported from zero before any; unknown labels still count.
#[test]
fn every_request_series_counts_its_own_requests() {
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let before = render(&registry).expect("encodes");
    assert!(
        before.contains("forcegate_admission_requests_total{endpoint=\"mutate\",intent=\"NotGated\",decision=\"denied\"} 0"),
        "{before}"
    );
    assert!(
        before
            .contains("forcegate_admission_request_duration_seconds_count{endpoint=\"mutate\"} 0"),
        "{before}"
    );
    let mut expected = Vec::new();
    let mut n = 0;
    for endpoint in ENDPOINTS {
        for intent in IntentKind::NAMES {
            for allowed in [true, false] {
                n += 1;
                for _ in 0..n {
                    metrics.decided(endpoint, intent, allowed);
                }
                let decision = if allowed { "allowed" } else { "denied" };
                expected.push(format!(
                    "forcegate_admission_requests_total{{endpoint=\"{endpoint}\",intent=\"{intent}\",decision=\"{decision}\"}} {n}"
                ));
            }
        }
    }
    metrics.decided("other", "ForceDelete", true);
    metrics.observe_duration("mutate", 0.3);
    metrics.observe_duration("mutate", 0.3);
    metrics.observe_duration("validate", 0.0001);
    metrics.observe_duration("other", 0.0001);
    expected.push(
        "forcegate_admission_requests_total{endpoint=\"other\",intent=\"ForceDelete\",decision=\"allowed\"} 1".into(),
    );
    expected
        .push("forcegate_admission_request_duration_seconds_count{endpoint=\"mutate\"} 2".into());
    expected
        .push("forcegate_admission_request_duration_seconds_count{endpoint=\"validate\"} 1".into());
    expected
        .push("forcegate_admission_request_duration_seconds_count{endpoint=\"other\"} 1".into());
    let text = render(&registry).expect("encodes");
    for line in expected {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
}

#[test]
fn in_flight_guard_decrements_on_drop() {
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let guard = metrics.in_flight();
    let second = metrics.in_flight();
    assert_eq!(metrics.in_flight_now(), 2);
    drop(guard);
    drop(second);
    assert_eq!(metrics.in_flight_now(), 0);
}
