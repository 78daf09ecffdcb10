//! Names of ForceDeletion records: `fd-<uid>` of the deleted or stripped
//! object, as the cluster view knows it.
//!
//! Named from the UID so the double admission call of a grace-0 delete, and
//! retries, write one record; taken from the view ([`Facts::identity`]),
//! never from the request, so nobody can claim another object's name.

use crate::facts::Facts;

/// Longest Kubernetes object name (a DNS-1123 subdomain).
const MAX: usize = 253;

/// The record name for the object the facts identified, if any.
pub fn of_facts(facts: &Facts) -> Option<String> {
    facts
        .identity
        .as_ref()
        .map(|identity| record_name(&identity.uid))
}

/// The record name for an object: from its UID, or (no UID) from its
/// resource, namespace and name.
pub fn of_object(uid: Option<&str>, resource: &str, namespace: Option<&str>, name: &str) -> String {
    match uid.filter(|u| !u.is_empty()) {
        Some(uid) => record_name(uid),
        None => record_name(&format!("{resource}/{}/{name}", namespace.unwrap_or(""))),
    }
}

/// `fd-<uid>`. UIDs are lowercase UUIDs; anything that would not make a
/// DNS-1123 subdomain is sanitized and suffixed with a hash of the input,
/// so distinct inputs keep distinct names and the result is stable.
pub fn record_name(uid: &str) -> String {
    let plain = format!("fd-{uid}");
    if is_dns1123_subdomain(&plain) {
        return plain;
    }
    let suffix = format!("-{:016x}", fnv1a64(uid.as_bytes()));
    let mut body: String = uid
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    body.truncate(MAX - "fd-".len() - suffix.len());
    format!("fd-{body}{suffix}")
}

/// RFC 1123 subdomain: `.`-separated labels of `[a-z0-9-]`, alphanumeric
/// at both ends, 253 characters at most.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        bytes.first().is_some_and(u8::is_ascii_alphanumeric)
            && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    };
    !name.is_empty() && name.len() <= MAX && name.split('.').all(label_ok)
}

/// Stable across builds and platforms (unlike `DefaultHasher`), so
/// sanitized names never change between releases.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
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
}
