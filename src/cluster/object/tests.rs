use super::*;
use serde_json::json;

/// Borrowed keys find exactly what the owned keys do, in std's map and
/// in the index's: same hash, same equality.
#[test]
fn borrowed_keys_look_up_like_owned_keys() {
    let owned = [("shop", "web-0"), ("", "node-1"), ("a", "bc"), ("ab", "c")];
    let mut std_map = std::collections::HashMap::new();
    let mut fast_map = crate::cluster::index::FastMap::default();
    for (i, (namespace, name)) in owned.into_iter().enumerate() {
        std_map.insert(ObjectKey::new(namespace, name), i);
        fast_map.insert(ObjectKey::new(namespace, name), i);
    }
    for (i, parts) in owned.iter().enumerate() {
        assert_eq!(std_map.get(key(parts)), Some(&i), "{parts:?}");
        assert_eq!(fast_map.get(key(parts)), Some(&i), "{parts:?}");
    }
    for absent in [("shop", "web-1"), ("", "shop"), ("abc", ""), ("node-1", "")] {
        assert_eq!(std_map.get(key(&absent)), None, "{absent:?}");
        assert_eq!(fast_map.get(key(&absent)), None, "{absent:?}");
    }
}

#[test]
fn decodes_other_versions_into_records() {
    let value = json!({
        "apiVersion": "batch/v1beta1",
        "kind": "CronJob",
        "metadata": {
            "name": "nightly", "namespace": "ops", "uid": "u-1",
            "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
        },
        "spec": {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}},
        "status": {"active": [{"name": "nightly-1"}]}
    });
    let object = Object::from_value(Kind::CronJob, value).expect("decodes");
    assert_eq!(object.key(), ObjectKey::new("ops", "nightly"));
    assert_eq!(object.meta().uid.as_deref(), Some("u-1"));
    let Object::CronJob(cron) = object else {
        panic!("wrong kind")
    };
    assert_eq!(cron.concurrency_policy.as_deref(), Some("Forbid"));
    assert_eq!(cron.active, 1);
    assert!(!cron.suspend);
}

#[test]
fn cluster_scoped_keys_ignore_a_stray_namespace() {
    let value = json!({"metadata": {"name": "pv-1", "namespace": "oops"}});
    let object = Object::from_value(Kind::PersistentVolume, value).expect("decodes");
    assert_eq!(object.key(), ObjectKey::cluster("pv-1"));
}

#[test]
fn rejects_ill_typed_objects() {
    let value = json!({"metadata": {"name": "p"}, "spec": {"containers": "nope"}});
    assert!(Object::from_value(Kind::Pod, value).is_err());
}
