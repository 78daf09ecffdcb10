use super::super::{CaseReport, SuiteReport};
use super::*;

fn sample() -> Report {
    Report {
        suites: vec![SuiteReport {
            file: "policies/a_test.yaml".into(),
            name: "a & b".into(),
            error: None,
            cases: vec![
                CaseReport {
                    name: "passes".into(),
                    line: 3,
                    failures: vec![],
                    observed: None,
                    seconds: 0.001,
                },
                CaseReport {
                    name: "fails <badly>".into(),
                    line: 9,
                    failures: vec!["expected allowed: true, got false".into()],
                    observed: None,
                    seconds: 0.002,
                },
            ],
        }],
    }
}

#[test]
fn junit_is_escaped_and_counts() {
    let xml = junit(&sample());
    assert!(
        xml.contains("tests=\"2\" failures=\"1\" errors=\"0\""),
        "{xml}"
    );
    assert!(xml.contains("name=\"a &amp; b\""));
    assert!(xml.contains("name=\"fails &lt;badly&gt;\""));
    assert!(xml.contains("<failure message=\"expected allowed: true, got false\">"));
}

#[test]
fn text_summarizes() {
    let text = text(&sample());
    assert!(text.contains("  ok    passes"));
    assert!(text.contains("  FAIL  fails <badly> (policies/a_test.yaml:9)"));
    assert!(
        text.ends_with("1 suites, 2 cases: 1 passed, 1 failed\n"),
        "{text}"
    );
}

#[test]
fn json_has_totals() {
    let value: serde_json::Value = serde_json::from_str(&json(&sample())).expect("json");
    assert_eq!(value["failed"], 1);
    assert_eq!(value["ok"], false);
}
