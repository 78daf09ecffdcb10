use super::*;
use k8s_openapi::api::admissionregistration::v1::ServiceReference;

fn target() -> Target {
    Target {
        selector: "app.kubernetes.io/name=forcegate".into(),
        service: "forcegate".into(),
        namespace: "forcegate".into(),
    }
}

#[test]
fn the_checked_host_is_the_services_or_the_urls() {
    let service = |name: &str, namespace: &str| WebhookClientConfig {
        service: Some(ServiceReference {
            name: name.into(),
            namespace: namespace.into(),
            ..ServiceReference::default()
        }),
        ..WebhookClientConfig::default()
    };
    assert_eq!(
        host(&service("forcegate", "forcegate"), &target()).as_deref(),
        Some("forcegate.forcegate.svc")
    );
    assert_eq!(host(&service("other", "forcegate"), &target()), None);
    assert_eq!(host(&service("forcegate", "elsewhere"), &target()), None);
    let url = |url: &str| WebhookClientConfig {
        url: Some(url.into()),
        ..WebhookClientConfig::default()
    };
    for (text, expected) in [
        ("https://127.0.0.1:8443/validate", Some("127.0.0.1")),
        ("https://[::1]:8443/validate", Some("::1")),
        ("https://webhook.example/validate", Some("webhook.example")),
        ("http://127.0.0.1/validate", None),
    ] {
        assert_eq!(host(&url(text), &target()).as_deref(), expected, "{text}");
    }
}
