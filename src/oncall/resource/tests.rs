use super::*;

#[test]
fn names_resolve_like_kubectl() {
    let mut types = builtin();
    types.push(ResourceType::new(
        "acme.example",
        "v1",
        "Widget",
        "widgets",
        &["wd"],
        true,
    ));
    for (name, kind) in [
        ("pod", "Pod"),
        ("pods", "Pod"),
        ("po", "Pod"),
        ("PVC", "PersistentVolumeClaim"),
        ("pv", "PersistentVolume"),
        ("ns", "Namespace"),
        ("widgets", "Widget"),
        ("wd", "Widget"),
        ("widgets.acme.example", "Widget"),
        ("Widget", "Widget"),
        ("deployments.apps", "Deployment"),
    ] {
        assert_eq!(
            resolve(name, &types).map(|t| t.kind.as_str()).ok(),
            Some(kind),
            "{name}"
        );
    }
    let err = resolve("gadgets", &types).expect_err("unknown");
    assert!(err.to_string().contains("\"gadgets\""));
}
