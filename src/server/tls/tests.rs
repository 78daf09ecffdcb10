use super::*;
use crate::certs::{Authority, Leaf, write_leaf};

fn authority() -> Authority {
    Authority::generate("svc", "ns", 1).expect("CA")
}

fn serial(leaf: &Leaf) -> String {
    let der = CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes()).expect("PEM");
    certificate_info(&der).expect("parses").serial
}

/// A self-signed pair whose validity ended in 2001.
fn expired() -> Leaf {
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    params.not_before = rcgen::date_time_ymd(2000, 1, 1);
    params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("cert");
    Leaf {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

#[test]
fn reload_swaps_only_to_valid_different_pairs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = authority();
    let first = ca.issue("svc", "ns", 1).expect("leaf");
    write_leaf(dir.path(), &first).expect("write");
    let store = CertStore::load(dir.path(), TlsMetrics::default()).expect("loads");
    assert_eq!(store.current().serial, serial(&first));
    assert_eq!(store.reload().expect("same files"), Reloaded::Unchanged);

    // Key of another pair: rejected once, then not re-reported.
    let second = ca.issue("svc", "ns", 1).expect("leaf");
    let mismatched = Leaf {
        cert_pem: second.cert_pem.clone(),
        key_pem: first.key_pem.clone(),
    };
    write_leaf(dir.path(), &mismatched).expect("write");
    assert!(matches!(store.reload(), Err(TlsError::Key { .. })));
    assert_eq!(
        store.reload().expect("already rejected"),
        Reloaded::Unchanged
    );
    assert_eq!(store.current().serial, serial(&first));

    write_leaf(dir.path(), &expired()).expect("write");
    assert!(matches!(store.reload(), Err(TlsError::Expired { .. })));
    assert_eq!(store.current().serial, serial(&first));

    write_leaf(dir.path(), &second).expect("write");
    let replaced = store.reload().expect("valid pair");
    assert_eq!(replaced, Reloaded::Replaced(store.current()));
    assert_eq!(store.current().serial, serial(&second));
}

#[test]
fn garbage_and_missing_files_are_named_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    match CertStore::load(dir.path(), TlsMetrics::default()) {
        Err(TlsError::Read { path, .. }) => assert!(path.ends_with(CERT_FILE)),
        other => panic!("expected a read error, got {:?}", other.err()),
    }
    std::fs::write(dir.path().join(CERT_FILE), "hello").expect("write");
    std::fs::write(dir.path().join(KEY_FILE), "world").expect("write");
    assert!(matches!(
        CertStore::load(dir.path(), TlsMetrics::default()),
        Err(TlsError::NoCertificate { .. })
    ));
}

#[test]
fn an_expired_pair_still_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_leaf(dir.path(), &expired()).expect("write");
    let store = CertStore::load(dir.path(), TlsMetrics::default()).expect("starts");
    assert!(store.current().not_after < unix_now());
}

#[test]
fn server_config_offers_h2_and_http1() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_leaf(
        dir.path(),
        &authority().issue("svc", "ns", 1).expect("leaf"),
    )
    .expect("write");
    let store = CertStore::load(dir.path(), TlsMetrics::default()).expect("loads");
    let config = store.server_config(None).expect("config");
    assert_eq!(
        config.alpn_protocols,
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    );
}
