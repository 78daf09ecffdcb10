use super::warnings::truncate_runes;
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
    let (request, decision) = (request(), denial());
    let response = respond(&request, &decision, None);
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
fn members_are_sorted_at_every_level() {
    let mut decision = denial();
    for i in 0..32 {
        decision
            .audit_annotations
            .insert(format!("key-{i}"), format!("value-{i}"));
    }
    // Re-serializing through serde_json's sorted map (no `preserve_order`
    // in this build) gives the same bytes.
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}
    ]))
    .expect("patch");
    let (request, update) = (request(), update_request());
    let plain = encode(&respond(&request, &decision, None));
    let with_patch = encode(&respond(&update, &decision, Some(patch)));
    assert!(String::from_utf8_lossy(&with_patch).contains("\"patchType\":\"JSONPatch\""));
    for bytes in [plain, with_patch] {
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
    let (allow, update) = (Decision::allow(), update_request());
    let response = respond(&update, &allow, Some(patch.clone()));
    let review: Value = serde_json::from_slice(&encode(&response)).expect("JSON");
    assert_eq!(review["response"]["patchType"], "JSONPatch");
    let encoded = review["response"]["patch"].as_str().expect("base64 string");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    let round_trip: json_patch::Patch = serde_json::from_slice(&decoded).expect("patch JSON");
    assert_eq!(round_trip, patch);

    let request = request();
    let on_delete = respond(&request, &allow, Some(patch));
    assert!(on_delete.patch.is_none(), "a DELETE cannot be patched");
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
        BTreeMap::from([("break-glass", "on-call"), ("record", "fd-1")])
    );
    // Two keys that strip to the same name: the first in sorted order wins.
    let clash = BTreeMap::from([
        ("z.example/record".to_owned(), "last".to_owned()),
        ("a.example/record".to_owned(), "first".to_owned()),
    ]);
    assert_eq!(
        audit_annotations(&clash),
        BTreeMap::from([("record", "first")])
    );
    // Stripped names are written in their own order, not their keys'.
    let reordered = BTreeMap::from([
        ("a.example/zone".to_owned(), "z".to_owned()),
        ("b.example/alpha".to_owned(), "a".to_owned()),
        ("decision".to_owned(), "d".to_owned()),
    ]);
    assert_eq!(
        audit_annotations(&reordered),
        BTreeMap::from([("alpha", "a"), ("decision", "d"), ("zone", "z")])
    );
}

proptest::proptest! {
    /// For any texts (denials and allows, warnings, audit annotations,
    /// patches) the response is JSON with its members sorted, carrying
    /// the decision's texts.
    #[test]
    fn encode_writes_sorted_json_of_the_decision(
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
        let update = update_request();
        let bytes = encode(&respond(&update, &decision, patch));
        let review: Value = serde_json::from_slice(&bytes).expect("JSON");
        proptest::prop_assert_eq!(serde_json::to_vec(&review).expect("a Value serializes"), bytes);
        let body = &review["response"];
        proptest::prop_assert_eq!(&body["allowed"], &json!(allowed));
        proptest::prop_assert_eq!(body.get("patch").is_some(), patched);
        let message = body["status"]["message"].as_str().unwrap_or_default();
        let expected = if allowed { "" } else { decision.message.as_str() };
        proptest::prop_assert_eq!(message, expected);
        let notes: BTreeMap<String, String> =
            serde_json::from_value(body["auditAnnotations"].clone()).unwrap_or_default();
        proptest::prop_assert_eq!(notes, decision.audit_annotations);
        let sent: Vec<String> =
            serde_json::from_value(body["warnings"].clone()).unwrap_or_default();
        proptest::prop_assert_eq!(sent, limit_warnings(&decision.warnings));
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

#[test]
fn cleaning_condenses_and_limiting_notes_what_it_omits() {
    let long = "x".repeat(300);
    let w = clean_warning(&format!("line one\nline two {long}")).into_owned();
    assert_eq!(w.chars().count(), MAX_WARNING_RUNES);
    assert!(w.starts_with("line one line two"));
    assert!(!w.contains('\n'));

    let many: Vec<String> = (0..40)
        .map(|i| format!("{i:02} {}", "y".repeat(200)))
        .collect();
    let fitted = limit_warnings(many);
    let total: usize = fitted.iter().map(String::len).sum();
    assert!(total <= MAX_WARNINGS_BYTES, "{total}");
    assert!(
        fitted
            .last()
            .is_some_and(|n| n.contains("more warning(s) omitted"))
    );
    assert!(
        fitted
            .iter()
            .all(|w| w.chars().count() <= MAX_WARNING_RUNES)
    );

    let dup = limit_warnings(vec!["a".to_string(), "a".to_string()]);
    assert_eq!(dup, vec!["a"]);
}

#[test]
fn multibyte_truncation_counts_runes() {
    let w = clean_warning(&"é".repeat(400)).into_owned();
    assert_eq!(w.chars().count(), MAX_WARNING_RUNES);
}

/// The rule written the obvious way: controls to spaces, trim, condense
/// runs of spaces, cut past 256 runes.
fn clean_warning_reference(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut condensed = String::new();
    for c in spaced.trim().chars() {
        if !(c == ' ' && condensed.ends_with(' ')) {
            condensed.push(c);
        }
    }
    if condensed.chars().count() <= MAX_WARNING_RUNES {
        condensed
    } else {
        let mut cut: String = condensed.chars().take(MAX_WARNING_RUNES - 1).collect();
        cut.push('…');
        cut
    }
}

proptest::proptest! {
    /// Around the edges the fast path skips work on: controls that are
    /// also whitespace (`\u{85}`), whitespace that is not a space
    /// (`\u{a0}`), runs of spaces, multi-byte runes at the cut.
    #[test]
    fn clean_warning_matches_the_plain_rule(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "a", "word", " ", "  ", "\n", "\t", "\u{0}", "\u{85}", "\u{a0}",
                "é", "日本", "🙂", "\u{2028}", "\u{1b}[0m",
            ]),
            0..120,
        ),
        repeat in 1usize..4,
    ) {
        let text = parts.concat().repeat(repeat);
        proptest::prop_assert_eq!(clean_warning(&text), clean_warning_reference(&text));
    }
}
