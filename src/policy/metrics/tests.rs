use super::*;
use crate::decision::Action;
use prometheus_client::encoding::text::encode;

#[test]
fn exposes_reloads_with_result_label() {
    let mut registry = Registry::default();
    let metrics = PolicyMetrics::register(&mut registry);
    metrics.loaded(7);
    metrics.reload_failed();
    let mut text = String::new();
    encode(&mut text, &registry).expect("encode");
    assert!(
        text.contains("forcegate_policy_reloads_total{result=\"success\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("forcegate_policy_reloads_total{result=\"failure\"} 1"),
        "{text}"
    );
    assert!(text.contains("forcegate_policies_loaded 7"), "{text}");
    assert_eq!(metrics.reload_counts(), (1, 1));
}

#[test]
fn counts_decisions_allowed_by_break_glass() {
    let mut registry = Registry::default();
    let metrics = PolicyMetrics::register(&mut registry);
    metrics.observe(&Decision::default());
    metrics.observe(&Decision {
        allowed: true,
        break_glass: Some("INC-1".into()),
        ..Decision::default()
    });
    let mut text = String::new();
    encode(&mut text, &registry).expect("encode");
    assert!(text.contains("forcegate_break_glass_total 1\n"), "{text}");
}

fn fired(policy: &str, action: Action, unknown: bool) -> crate::decision::PolicyOutcome {
    crate::decision::PolicyOutcome {
        policy: policy.into(),
        action,
        fact: String::new(),
        unknown,
    }
}

/// Each (policy, action, unknown) counts in its own series, the same
/// series every time, and only series that fired are exported.
#[test]
fn counts_outcomes_by_policy_action_and_unknown() {
    let mut registry = Registry::default();
    let metrics = PolicyMetrics::register(&mut registry);
    let clone = metrics.clone();
    let decisions = [
        vec![
            fired("node-alive", Action::Deny, false),
            fired("record", Action::Record, false),
        ],
        vec![fired("node-alive", Action::Deny, false)],
        vec![
            fired("node-alive", Action::Deny, true),
            fired("warn-me", Action::Warn, false),
        ],
    ];
    for (i, outcomes) in decisions.into_iter().enumerate() {
        let decision = Decision {
            outcomes,
            ..Decision::default()
        };
        // Clones share the series.
        if i % 2 == 0 {
            metrics.observe(&decision);
        } else {
            clone.observe(&decision);
        }
    }
    let mut text = String::new();
    encode(&mut text, &registry).expect("encode");
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("forcegate_policy_outcomes_total{"))
        .collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            r#"forcegate_policy_outcomes_total{policy="node-alive",action="Deny",unknown="false"} 2"#,
            r#"forcegate_policy_outcomes_total{policy="node-alive",action="Deny",unknown="true"} 1"#,
            r#"forcegate_policy_outcomes_total{policy="record",action="Record",unknown="false"} 1"#,
            r#"forcegate_policy_outcomes_total{policy="warn-me",action="Warn",unknown="false"} 1"#,
        ],
        "{text}"
    );
}
