use super::*;

fn render(registry: &Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).expect("encodes");
    text
}

/// Only phases with records have an oldest time; a phase emptied since
/// the last report loses its series, and losing the lease clears all.
#[test]
fn oldest_record_per_phase_follows_the_records() {
    let mut registry = Registry::default();
    let metrics = CleanupMetrics::register(&mut registry);
    let name = "forcegate_forcedeletions_oldest_created_timestamp_seconds";
    metrics.set_oldest(&[(Phase::Pending, 100), (Phase::NeedsAttention, 50)]);
    let text = render(&registry);
    assert!(
        text.contains(&format!("{name}{{phase=\"Pending\"}} 100\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{name}{{phase=\"NeedsAttention\"}} 50\n")),
        "{text}"
    );
    assert!(
        !text.contains(&format!("{name}{{phase=\"Clean\"}}")),
        "{text}"
    );
    metrics.set_oldest(&[(Phase::NeedsAttention, 60)]);
    let text = render(&registry);
    assert!(
        !text.contains(&format!("{name}{{phase=\"Pending\"}}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{name}{{phase=\"NeedsAttention\"}} 60\n")),
        "{text}"
    );
    metrics.clear_phases();
    assert!(!render(&registry).contains(&format!("{name}{{")));
}
