use super::*;
use crate::decision::Action;

fn headers(content_type: Option<&'static str>, length: Option<&'static str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(ct) = content_type {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    if let Some(len) = length {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static(len));
    }
    headers
}

#[test]
fn content_type_must_be_json() {
    assert!(check_content_type(&headers(Some("application/json"), None)).is_ok());
    assert!(check_content_type(&headers(Some("Application/JSON; charset=utf-8"), None)).is_ok());
    for bad in [Some("text/plain"), Some("application/yaml"), None] {
        let err = check_content_type(&headers(bad, None)).expect_err("rejected");
        assert_eq!(err.http_status(), 415);
    }
}

#[test]
fn declared_length_over_limit_is_413() {
    assert_eq!(
        check_declared_length(&headers(None, Some("10")), 10).ok(),
        Some(Some(10))
    );
    let err = check_declared_length(&headers(None, Some("11")), 10).expect_err("too large");
    assert_eq!(err.http_status(), 413);
    assert_eq!(
        check_declared_length(&headers(None, Some("junk")), 10).ok(),
        Some(None)
    );
}

#[tokio::test]
async fn body_reading_stops_at_the_limit() {
    let ok = body::read(&mut Body::from(vec![b'x'; 10]), 10, 10)
        .await
        .expect("fits");
    assert_eq!(ok.len(), 10);
    let err = body::read(&mut Body::from(vec![b'x'; 11]), 0, 10)
        .await
        .expect_err("over");
    assert_eq!(err.reason(), "too_large");
}

#[test]
fn names_the_policies_that_fired_in_order() {
    let fired = |policy: &str| PolicyOutcome {
        policy: policy.into(),
        action: Action::Deny,
        fact: String::new(),
        unknown: false,
    };
    assert_eq!(policy_names(&[]), "");
    assert_eq!(policy_names(&[fired("leader")]), "leader");
    let three = [fired("leader"), fired("attached-volumes"), fired("pdb")];
    assert_eq!(policy_names(&three), "leader,attached-volumes,pdb");
}

#[test]
fn describes_objects_for_logs() {
    let target = ObjectRef {
        resource: "pods".into(),
        subresource: Some("eviction".into()),
        namespace: Some("db".into()),
        name: "postgres-0".into(),
        ..ObjectRef::default()
    };
    assert_eq!(described(&target), "pods/eviction db/postgres-0");
    let cluster_scoped = ObjectRef {
        resource: "namespaces".into(),
        subresource: Some("finalize".into()),
        name: "legacy".into(),
        ..ObjectRef::default()
    };
    assert_eq!(described(&cluster_scoped), "namespaces/finalize legacy");
    let grouped = ObjectRef {
        group: "storage.k8s.io".into(),
        resource: "volumeattachments".into(),
        name: "csi-0a1b".into(),
        ..ObjectRef::default()
    };
    assert_eq!(
        described(&grouped),
        "volumeattachments.storage.k8s.io csi-0a1b"
    );
}
