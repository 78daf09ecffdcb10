use super::*;
use crate::facts::IdentityFacts;

const UID: &str = "5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11";

#[test]
fn record_name_of_a_uid_is_fd_uid() {
    assert_eq!(record_name(UID), format!("fd-{UID}"));
    assert!(is_dns1123_subdomain(&record_name(UID)));
}

#[test]
fn only_an_identified_object_has_a_record_name() {
    assert_eq!(of_facts(&Facts::default()), None);
    let facts = Facts {
        identity: Some(IdentityFacts { uid: UID.into() }),
        ..Facts::default()
    };
    assert_eq!(of_facts(&facts), Some(format!("fd-{UID}")));
}

#[test]
fn record_name_sanitizes_deterministically_and_keeps_inputs_apart() {
    let odd = [
        "Pod/Default/Web_0",
        "pod/default/web_0",
        "",
        "-",
        "a..b",
        &"x".repeat(400),
        "ünï/cödé",
    ];
    let names: Vec<String> = odd.iter().map(|u| record_name(u)).collect();
    for (input, name) in odd.iter().zip(&names) {
        assert!(is_dns1123_subdomain(name), "{input:?} -> {name:?}");
        assert!(name.len() <= MAX, "{name}");
        assert_eq!(&record_name(input), name, "stable for {input:?}");
    }
    let distinct: std::collections::BTreeSet<_> = names.iter().collect();
    assert_eq!(distinct.len(), names.len(), "{names:?}");
}

#[test]
fn dns1123_subdomain_rules() {
    for good in ["fd-a", "a.b-c", "0", &"a".repeat(253)] {
        assert!(is_dns1123_subdomain(good), "{good}");
    }
    for bad in [
        "",
        "A",
        "-a",
        "a-",
        "a..b",
        "a_b",
        ".a",
        "a.",
        "a-.b",
        "a.-b",
        &"a".repeat(254),
    ] {
        assert!(!is_dns1123_subdomain(bad), "{bad}");
    }
}

#[test]
fn objects_without_a_uid_keep_apart_by_coordinates() {
    let a = of_object(None, "pods", Some("db"), "web-0");
    let b = of_object(Some(""), "pods", Some("db"), "web-1");
    assert_ne!(a, b);
    assert!(is_dns1123_subdomain(&a) && is_dns1123_subdomain(&b));
    assert_eq!(of_object(Some(UID), "pods", None, "x"), format!("fd-{UID}"));
}
