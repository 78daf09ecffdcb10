use super::*;
use crate::certs::{Authority, write_leaf};
use crate::server::metrics::TlsMetrics;

fn store() -> (tempfile::TempDir, Arc<CertStore>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = Authority::generate("svc", "ns", 1).expect("CA");
    write_leaf(dir.path(), &ca.issue("svc", "ns", 1).expect("leaf")).expect("write");
    let store = CertStore::load(dir.path(), TlsMetrics::default()).expect("loads");
    (dir, store)
}

fn der(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).expect("PEM")
}

#[test]
fn names_match_the_common_name_or_a_dns_name_in_any_case() {
    let (_dir, store) = store();
    let clients = Authority::generate("clients", "ns", 1).expect("CA");
    let check = |names: &[&str]| NameCheck {
        inner: verifier(
            &ClientAuth {
                ca_file: "unused".into(),
                names: Vec::new(),
            },
            clients.cert_pem().as_bytes(),
            store.provider(),
        )
        .expect("verifier"),
        names: names.iter().map(|n| (*n).to_owned()).collect(),
    };
    let apiserver = der(&clients
        .issue_client("kube-apiserver", 1)
        .expect("client")
        .cert_pem);
    assert!(check(&["KUBE-apiserver"]).accepts(&apiserver));
    assert!(check(&["other", "kube-apiserver"]).accepts(&apiserver));
    assert!(!check(&["kube-apiserver-2"]).accepts(&apiserver));
    assert!(!check(&["kube-apiserver"]).accepts(b"not a certificate"));
}

#[test]
fn a_bad_bundle_fails_at_start_and_is_ignored_on_reload() {
    let (dir, store) = store();
    let ca_file = dir.path().join("client-ca.crt");
    let auth = ClientAuth {
        ca_file: ca_file.clone(),
        names: Vec::new(),
    };
    std::fs::write(&ca_file, "no certificate here").expect("write");
    match Acceptor::new(store.clone(), Some(auth.clone())) {
        Err(TlsError::ClientCa { path, .. }) => assert_eq!(path, ca_file),
        other => panic!("expected a client CA error, got {:?}", other.err()),
    }

    let first = Authority::generate("clients", "ns", 1).expect("CA");
    std::fs::write(&ca_file, first.cert_pem()).expect("write");
    let acceptor = Acceptor::new(store, Some(auth)).expect("acceptor");
    let before = acceptor.current();
    assert!(!acceptor.reload_client_ca(), "unchanged bundle");
    std::fs::write(&ca_file, "-----BEGIN CERTIFICATE-----\ngarbage\n").expect("write");
    assert!(!acceptor.reload_client_ca(), "broken bundle rejected");
    assert!(Arc::ptr_eq(&before, &acceptor.current()));

    let second = Authority::generate("clients", "ns", 1).expect("CA");
    std::fs::write(&ca_file, second.cert_pem()).expect("write");
    assert!(acceptor.reload_client_ca(), "new bundle taken");
    assert!(!Arc::ptr_eq(&before, &acceptor.current()));
}

#[test]
fn without_client_auth_there_is_nothing_to_reload() {
    let (_dir, store) = store();
    let acceptor = Acceptor::new(store, None).expect("acceptor");
    assert!(acceptor.extra_watch_dir().is_none());
    assert!(!acceptor.reload_client_ca());
}
