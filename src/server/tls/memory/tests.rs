use super::*;
use crate::certs::Authority;

#[test]
fn pairs_from_bytes_swap_like_files() {
    let ca = Authority::generate("svc", "ns", 1).expect("CA");
    let first = ca.issue("svc", "ns", 1).expect("leaf");
    let store = CertStore::from_pem(
        "secret ns/svc-tls",
        first.cert_pem.clone().into_bytes(),
        first.key_pem.clone().into_bytes(),
        TlsMetrics::default(),
    )
    .expect("loads");
    let serial = store.current().serial;
    assert_eq!(
        store
            .replace_pem(
                first.cert_pem.clone().into_bytes(),
                first.key_pem.clone().into_bytes()
            )
            .expect("same pair"),
        Reloaded::Unchanged
    );
    let second = ca.issue("svc", "ns", 1).expect("leaf");
    let err = store
        .replace_pem(
            second.cert_pem.clone().into_bytes(),
            first.key_pem.into_bytes(),
        )
        .expect_err("mismatched key");
    assert!(err.to_string().contains("secret ns/svc-tls"), "{err}");
    assert_eq!(store.current().serial, serial);
    let replaced = store
        .replace_pem(second.cert_pem.into_bytes(), second.key_pem.into_bytes())
        .expect("valid pair");
    assert_eq!(replaced, Reloaded::Replaced(store.current()));
    assert_ne!(store.current().serial, serial);
    assert_eq!(store.chain().len(), 1);
}
