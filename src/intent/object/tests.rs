use super::*;
use serde_json::json;

fn object(body: Value) -> DynamicObject {
    serde_json::from_value(body).expect("a dynamic object")
}

#[test]
fn reads_members_by_name_as_written() {
    let pod = object(json!({
        "metadata": {"name": "p"},
        "spec": {"nodeName": "node-1", "a/b": {"~c": "escaped in a pointer"}},
        "status": {"phase": ""},
    }));
    assert_eq!(str_at(&pod, &["spec", "nodeName"]), Some("node-1"));
    // Names are taken literally: no JSON pointer escapes to undo.
    assert_eq!(
        str_at(&pod, &["spec", "a/b", "~c"]),
        Some("escaped in a pointer")
    );
    assert_eq!(
        at(&pod, &["spec", "nodeName"]),
        pod.data.pointer("/spec/nodeName")
    );
    // Empty strings, missing members and non-objects on the way read as absent.
    assert_eq!(str_at(&pod, &["status", "phase"]), None);
    assert_eq!(str_at(&pod, &["spec", "missing"]), None);
    assert_eq!(at(&pod, &["spec", "nodeName", "deeper"]), None);
    assert_eq!(at(&pod, &["status", "phase"]), Some(&json!("")));
}

#[test]
fn reads_finalizer_lists() {
    let namespace = object(json!({
        "metadata": {"name": "ns"},
        "spec": {"finalizers": ["kubernetes", 7, "example.com/x"]},
    }));
    assert_eq!(
        finalizers(Some(&namespace), &["spec", "finalizers"]),
        ["kubernetes", "example.com/x"]
    );
    assert!(finalizers(Some(&namespace), &["status", "finalizers"]).is_empty());
    assert!(finalizers(None, &["spec", "finalizers"]).is_empty());
}
