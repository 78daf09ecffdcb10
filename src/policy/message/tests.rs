use super::*;
use crate::policy::context::Context;
use serde_json::json;
use std::collections::BTreeMap;

fn render(template: &str, context: &Value, unknown: &[(&str, &str)]) -> String {
    let unknown: BTreeMap<String, String> = unknown
        .iter()
        .map(|(g, r)| (g.to_string(), r.to_string()))
        .collect();
    Template::parse(template)
        .expect("template parses")
        .render(&Scope {
            context: &Context::from_json(context),
            unknown: &unknown,
        })
}

#[test]
fn renders_holes() {
    let ctx = json!({
        "facts": {"node": {"name": "n1"}, "namespace": {"counts": {"Pod": 3, "Secret": 1}},
                  "volumes": {"claims": [{"claim": "a"}, {"claim": "b"}]}},
        "object": {"metadata": {"labels": {"app.kubernetes.io/name": "web"}}},
    });
    assert_eq!(
        render("node {{ facts.node.name }} is Ready", &ctx, &[]),
        "node n1 is Ready"
    );
    assert_eq!(
        render(
            "{{object.metadata.labels['app.kubernetes.io/name']}}",
            &ctx,
            &[]
        ),
        "web"
    );
    assert_eq!(
        render("{{ facts.namespace.counts }}", &ctx, &[]),
        "Pod=3, Secret=1"
    );
    assert_eq!(
        render("{{ facts.volumes.claims[*].claim }}", &ctx, &[]),
        "a, b"
    );
    assert_eq!(render("{{ facts.pod.name }}", &ctx, &[]), "<none>");
    // A repeated hole shows the same text each time; a missing one
    // takes each hole's own default.
    assert_eq!(
        render(
            "{{ facts.volumes.claims[*].claim }}/{{ facts.node.name }}/{{ facts.volumes.claims[*].claim }}/{{ facts.node.name }}",
            &ctx,
            &[]
        ),
        "a, b/n1/a, b/n1"
    );
    assert_eq!(
        render(
            "{{ facts.pod.name | default \"x\" }} {{ facts.pod.name }} {{ facts.pod.name | default \"y\" }}",
            &ctx,
            &[]
        ),
        "x <none> y"
    );
    assert_eq!(
        render("{{ facts.pod.name | default \"?\" }}", &ctx, &[]),
        "?"
    );
    assert_eq!(
        render(
            "{{ facts.node.name }}",
            &ctx,
            &[("node", "Node: not synced")]
        ),
        "<unknown>"
    );
}

#[test]
fn rejects_bad_templates() {
    assert!(Template::parse("{{ facts.node.name ").is_err());
    assert!(
        Template::parse("{{ objekt.name }}")
            .unwrap_err()
            .1
            .contains("not in the evaluation context")
    );
    assert!(
        Template::parse("{{ facts.node.name | upper }}")
            .unwrap_err()
            .1
            .contains("unknown filter")
    );
    assert_eq!(Template::parse("a {{ }}").unwrap_err().0, 2);
}
