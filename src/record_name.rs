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
mod tests;
