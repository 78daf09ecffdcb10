use super::*;
use kube::client::APIGroupDiscoveryList;

#[test]
fn stale_versions_become_gaps_and_preferred_versions_win() {
    let list: APIGroupDiscoveryList = serde_json::from_str(r#"{"items": [
            {"metadata": {"name": "acme.example"}, "versions": [
                {"version": "v2", "freshness": "Current", "resources": [
                    {"resource": "widgets", "responseKind": {"group": "acme.example", "version": "v2", "kind": "Widget"},
                     "scope": "Namespaced", "singularResource": "widget", "verbs": ["get", "list"], "shortNames": ["wd"]},
                    {"resource": "widgets/status", "verbs": ["get"]}]},
                {"version": "v1", "freshness": "Current", "resources": [
                    {"resource": "widgets", "responseKind": {"kind": "Widget"}, "scope": "Namespaced", "verbs": ["list"]},
                    {"resource": "gadgets", "responseKind": {"kind": "Gadget"}, "scope": "Cluster", "verbs": ["get"]}]}]},
            {"metadata": {"name": "metrics.acme.example"}, "versions": [
                {"version": "v1", "freshness": "Stale", "resources": []}]}
        ]}"#).expect("discovery JSON");
    let (types, gaps) = served(list.items.iter());
    let names: Vec<(&str, &str)> = types
        .iter()
        .map(|t| (t.resource.plural.as_str(), t.resource.version.as_str()))
        .collect();
    assert_eq!(names, [("widgets", "v2"), ("gadgets", "v1")]);
    assert!(types[0].lists() && !types[1].lists());
    assert!(types[0].resource.namespaced && !types[1].resource.namespaced);
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].what, "discovery metrics.acme.example/v1");
}
