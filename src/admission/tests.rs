use super::*;
use crate::decision::{Action, PolicyOutcome};
use serde_json::json;

const DELETE_REVIEW: &str = r#"{
  "apiVersion": "admission.k8s.io/v1",
  "kind": "AdmissionReview",
  "request": {
    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
    "kind": {"group": "", "version": "v1", "kind": "Pod"},
    "resource": {"group": "", "version": "v1", "resource": "pods"},
    "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
    "requestResource": {"group": "", "version": "v1", "resource": "pods"},
    "name": "web-0",
    "namespace": "shop",
    "operation": "DELETE",
    "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
    "object": null,
    "oldObject": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop", "uid": "3b1f"}},
    "dryRun": false,
    "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
  }
}"#;

fn review_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut value: Value = serde_json::from_str(DELETE_REVIEW).expect("fixture is JSON");
    edit(&mut value);
    serde_json::to_vec(&value).expect("serializable")
}

fn request() -> Request {
    decode(DELETE_REVIEW.as_bytes()).expect("fixture decodes")
}

#[test]
fn decodes_a_delete_review_with_null_object() {
    let request = request();
    assert_eq!(request.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(request.name, "web-0");
    assert!(request.object.is_none());
    assert_eq!(
        request
            .old_object
            .as_ref()
            .and_then(|o| o.metadata.uid.as_deref()),
        Some("3b1f")
    );
    assert_eq!(request.types.api_version, "admission.k8s.io/v1");
}

#[test]
fn decodes_when_object_and_options_are_absent() {
    let body = review_with(|v| {
        let request = v["request"].as_object_mut().expect("object");
        request.remove("object");
        request.remove("options");
    });
    let request = decode(&body).expect("absent object is fine");
    assert!(request.object.is_none());
    assert!(request.options.is_none());
}

#[test]
fn rejects_each_bad_shape_with_its_own_reason() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("not_json", b"{not json".to_vec()),
        ("not_json", Vec::new()),
        ("not_an_object", b"[1,2]".to_vec()),
        (
            "wrong_api_version",
            review_with(|v| v["apiVersion"] = json!("admission.k8s.io/v1beta1")),
        ),
        (
            "wrong_api_version",
            review_with(|v| {
                v.as_object_mut().expect("object").remove("apiVersion");
            }),
        ),
        ("wrong_kind", review_with(|v| v["kind"] = json!("Pod"))),
        (
            "no_request",
            review_with(|v| {
                v.as_object_mut().expect("object").remove("request");
            }),
        ),
        ("no_request", review_with(|v| v["request"] = Value::Null)),
        (
            "malformed_request",
            review_with(|v| v["request"] = json!("x")),
        ),
        ("no_uid", review_with(|v| v["request"]["uid"] = json!(""))),
        ("no_uid", review_with(|v| v["request"]["uid"] = json!(42))),
        (
            "no_uid",
            review_with(|v| {
                v["request"].as_object_mut().expect("object").remove("uid");
            }),
        ),
        (
            "malformed_request",
            review_with(|v| v["request"]["operation"] = json!("EXPLODE")),
        ),
        (
            "malformed_request",
            review_with(|v| {
                v["request"]
                    .as_object_mut()
                    .expect("object")
                    .remove("userInfo");
            }),
        ),
    ];
    for (expected, body) in cases {
        let err = decode(&body).expect_err(expected);
        assert_eq!(err.reason(), expected, "{err}");
        assert_eq!(err.http_status(), 400);
    }
}

#[test]
fn transport_errors_map_to_their_status() {
    assert_eq!(BadReview::TooLarge { limit: 1 }.http_status(), 413);
    let wrong = BadReview::WrongContentType {
        found: "text/plain".into(),
    };
    assert_eq!(wrong.http_status(), 415);
}

fn denial() -> Decision {
    Decision {
        allowed: false,
        message: "node-alive: node worker-1 is Ready; delete without --force".into(),
        warnings: vec!["forcegate: denied".into()],
        audit_annotations: BTreeMap::from([
            ("forcegate.dev/policies".into(), "node-alive".into()),
            ("decision".into(), "deny".into()),
        ]),
        record: false,
        outcomes: vec![PolicyOutcome {
            policy: "node-alive".into(),
            action: Action::Deny,
            fact: "facts.node.ready == true".into(),
            unknown: false,
        }],
        break_glass: None,
    }
}

#[test]
fn denial_echoes_uid_with_403_forbidden() {
    let decision = denial();
    let response = respond(&request(), &decision, None);
    let review: Value = serde_json::from_slice(&encode(&response)).expect("valid JSON");
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    let body = &review["response"];
    assert_eq!(body["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(body["allowed"], false);
    assert_eq!(body["status"]["code"], 403);
    assert_eq!(body["status"]["reason"], "Forbidden");
    assert_eq!(body["status"]["status"], "Failure");
    assert_eq!(body["status"]["message"], denial().message);
    assert_eq!(body["warnings"], json!(["forcegate: denied"]));
    assert_eq!(
        body["auditAnnotations"],
        json!({"decision": "deny", "policies": "node-alive"})
    );
    assert!(body.get("patch").is_none());
}

#[test]
fn allow_has_no_status_and_minimal_body() {
    let allow = Decision::allow();
    let bytes = encode(&respond(&request(), &allow, None));
    assert_eq!(
        String::from_utf8(bytes).expect("utf8"),
        r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"705ab4f5-6393-11e8-b7cc-42010a800002"}}"#
    );
}

#[test]
fn encoding_is_byte_identical_across_calls() {
    let mut decision = denial();
    for i in 0..32 {
        decision
            .audit_annotations
            .insert(format!("key-{i}"), format!("value-{i}"));
    }
    let first = encode(&respond(&request(), &decision, None));
    for _ in 0..20 {
        // A fresh HashMap per call gets a fresh random iteration order.
        assert_eq!(encode(&respond(&request(), &decision, None)), first);
    }
    // Keys sorted at every level: re-serializing through serde_json's
    // sorted map (no `preserve_order` in this build) gives the same bytes.
    let patch: json_patch::Patch = serde_json::from_value(json!([])).expect("patch");
    let with_patch = respond(&update_request(), &decision, Some(patch));
    for bytes in [first, encode(&with_patch)] {
        let reparsed: Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(serde_json::to_vec(&reparsed).unwrap(), bytes);
    }
}

fn update_request() -> Request {
    let body = review_with(|v| {
        v["request"]["operation"] = json!("UPDATE");
        v["request"]["object"] = v["request"]["oldObject"].clone();
    });
    decode(&body).expect("decodes")
}

#[test]
fn patch_is_base64_json_patch_on_update_only() {
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/metadata/annotations", "value": {"forcegate.dev/cleanup": "fd-3b1f"}}
    ]))
    .expect("patch");
    let allow = Decision::allow();
    let response = respond(&update_request(), &allow, Some(patch.clone()));
    let review: Value = serde_json::from_slice(&encode(&response)).expect("JSON");
    assert_eq!(review["response"]["patchType"], "JSONPatch");
    let encoded = review["response"]["patch"].as_str().expect("base64 string");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    let round_trip: json_patch::Patch = serde_json::from_slice(&decoded).expect("patch JSON");
    assert_eq!(round_trip, patch);

    let on_delete = respond(&request(), &allow, Some(patch));
    assert!(
        on_delete.response.patch.is_none(),
        "a DELETE cannot be patched"
    );
}

#[test]
fn warnings_respect_api_server_limits() {
    let long = "é".repeat(300);
    let mut input = vec![long, "  ".into(), "line\nbreak".into(), "x".repeat(300)];
    input.extend((0..40).map(|i| format!("{i:03} {}", "w".repeat(200))));
    let kept = limit_warnings(&input);
    assert_eq!(kept[0].chars().count(), MAX_WARNING_RUNES);
    assert!(kept[0].ends_with('…'));
    assert_eq!(
        kept[1], "line break",
        "blank dropped, control chars replaced"
    );
    assert_eq!(kept[2], format!("{}…", "x".repeat(MAX_WARNING_RUNES - 1)));
    assert!(kept.iter().map(|w| w.len()).sum::<usize>() <= MAX_WARNINGS_BYTES);
    assert!(kept.len() < input.len(), "budget drops the tail");
    assert!(kept.iter().all(|w| w.chars().count() <= MAX_WARNING_RUNES));
}

#[test]
fn audit_annotation_keys_become_bare_names() {
    let input = BTreeMap::from([
        ("forcegate.dev/record".to_owned(), "fd-1".to_owned()),
        ("bad key".to_owned(), "x".to_owned()),
        ("-leading".to_owned(), "x".to_owned()),
        ("a".repeat(64), "x".to_owned()),
        ("break-glass".to_owned(), "on-call".to_owned()),
    ]);
    assert_eq!(
        audit_annotations(&input),
        [("break-glass", "on-call"), ("record", "fd-1")]
    );
    // Two keys that strip to the same name: the first in sorted order wins.
    let clash = BTreeMap::from([
        ("z.example/record".to_owned(), "last".to_owned()),
        ("a.example/record".to_owned(), "first".to_owned()),
    ]);
    assert_eq!(audit_annotations(&clash), [("record", "first")]);
    // Stripped names are written in their own order, not their keys'.
    let reordered = BTreeMap::from([
        ("a.example/zone".to_owned(), "z".to_owned()),
        ("b.example/alpha".to_owned(), "a".to_owned()),
        ("decision".to_owned(), "d".to_owned()),
    ]);
    assert_eq!(
        audit_annotations(&reordered),
        [("alpha", "a"), ("decision", "d"), ("zone", "z")]
    );
}

/// What serde_json writes for `answer` as kube's response, with every
/// map's keys sorted: the bytes `encode` must give.
fn serde_reference(answer: &Answer<'_>) -> Vec<u8> {
    let response = &answer.clone().into_response();
    let mut body = serde_json::Map::new();
    body.insert("allowed".into(), json!(response.allowed));
    if !response.audit_annotations.is_empty() {
        body.insert("auditAnnotations".into(), json!(response.audit_annotations));
    }
    if let Some(patch) = &response.patch {
        let encoded = base64::engine::general_purpose::STANDARD.encode(patch);
        body.insert("patch".into(), json!(encoded));
        body.insert("patchType".into(), json!("JSONPatch"));
    }
    if !response.allowed {
        let status = &response.result;
        let mut fields = serde_json::Map::new();
        if status.code != 0 {
            fields.insert("code".into(), json!(status.code));
        }
        if !status.message.is_empty() {
            fields.insert("message".into(), json!(status.message));
        }
        if !status.reason.is_empty() {
            fields.insert("reason".into(), json!(status.reason));
        }
        fields.insert("status".into(), json!("Failure"));
        body.insert("status".into(), Value::Object(fields));
    }
    body.insert("uid".into(), json!(response.uid));
    if let Some(warnings) = response.warnings.as_ref().filter(|w| !w.is_empty()) {
        body.insert("warnings".into(), json!(warnings));
    }
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": body,
    });
    serde_json::to_vec(&review).expect("a Value serializes")
}

proptest::proptest! {
    /// The hand-written encoder gives serde_json's bytes for any texts:
    /// denials and allows, warnings, audit annotations, patches.
    #[test]
    fn encode_matches_serde_json(
        allowed in proptest::bool::ANY,
        message in "(?s).{0,200}",
        warnings in proptest::collection::vec("(?s)[ -~\n\t\"\\\\é]{0,40}", 0..4),
        notes in proptest::collection::btree_map("[a-z][a-z0-9.-]{0,8}[a-z]", "(?s).{0,30}", 0..5),
        patched in proptest::bool::ANY,
    ) {
        let decision = Decision {
            allowed,
            message,
            warnings,
            audit_annotations: notes,
            ..Decision::default()
        };
        let patch = patched.then(|| {
            serde_json::from_value::<json_patch::Patch>(json!([
                {"op": "add", "path": "/metadata/annotations", "value": {"a": "b\"c"}}
            ]))
            .expect("patch")
        });
        let response = respond(&update_request(), &decision, patch);
        proptest::prop_assert_eq!(
            String::from_utf8(encode(&response)).expect("utf8"),
            String::from_utf8(serde_reference(&response)).expect("utf8")
        );
    }
}

proptest::proptest! {
    /// Truncation counts runes, ASCII or not: the first `max - 1` and `…`
    /// once there are more than `max`.
    #[test]
    fn truncate_runes_counts_runes(text in "[a-z é日]{0,40}", max in 0usize..30) {
        let expected = if text.chars().count() <= max {
            text.clone()
        } else {
            let mut kept: String = text.chars().take(max.saturating_sub(1)).collect();
            kept.push('…');
            kept
        };
        proptest::prop_assert_eq!(truncate_runes(&text, max), expected);
    }
}

proptest::proptest! {
    /// Printable ASCII is space to `~`, wherever in a chunk of sixteen the
    /// first other byte falls.
    #[test]
    fn printable_ascii_is_space_to_tilde(text in "(?s)[ -~]{0,40}[\x00-\x1f\x7fé]?[ -~]{0,40}") {
        let expected = text.bytes().all(|b| (b' '..=b'~').contains(&b));
        proptest::prop_assert_eq!(is_printable_ascii(&text), expected);
    }
}
