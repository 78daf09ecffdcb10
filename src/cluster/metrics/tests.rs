use super::*;
use crate::cluster::SnapshotCluster;

#[test]
fn exposes_per_kind_series() {
    let view = SnapshotCluster::from_yaml_str(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c}]}\n",
    )
    .expect("loads");
    let mut registry = Registry::default();
    ClusterMetrics::register(&mut registry, Arc::new(view));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
    assert!(
        text.contains("forcegate_cluster_objects{kind=\"Pod\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("forcegate_cluster_synced{kind=\"Pod\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("forcegate_cluster_synced{kind=\"Lease\"} 0"),
        "{text}"
    );
    assert!(
        text.contains("forcegate_cluster_watch_errors_total{kind=\"Pod\"} 0"),
        "{text}"
    );
    assert!(
        text.contains("# TYPE forcegate_cluster_stale gauge"),
        "{text}"
    );
    assert!(
        !text.contains("last_event_age_seconds{"),
        "snapshots have no events: {text}"
    );
}
