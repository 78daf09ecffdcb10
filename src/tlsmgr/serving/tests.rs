use super::*;
use crate::certs::Authority;
use rustls_pki_types::pem::PemObject;

fn entry(bundle: &str, host: &str) -> Entry {
    Entry {
        name: "ValidatingWebhookConfiguration forcegate: a.forcegate.dev".into(),
        host: host.into(),
        ca_bundle: bundle.as_bytes().to_vec(),
    }
}

#[test]
fn ready_only_when_every_entry_trusts_the_served_chain() {
    let old = Authority::generate("forcegate", "fg", 10).expect("CA");
    let new = Authority::generate("forcegate", "fg", 10).expect("CA");
    let leaf = new.issue("forcegate", "fg", 1).expect("leaf");
    let chain = vec![CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes()).expect("PEM")];
    let both = format!("{}{}", old.cert_pem(), new.cert_pem());
    let host = "forcegate.fg.svc";
    assert_eq!(verify(&chain, &[entry(&both, host)], "sel"), Ok(()));
    assert_eq!(verify(&chain, &[entry(&both, "127.0.0.1")], "sel"), Ok(()));
    let only_old = verify(
        &chain,
        &[entry(&both, host), entry(&old.cert_pem(), host)],
        "sel",
    );
    assert!(only_old.is_err_and(|e| e.contains("does not verify")));
    let wrong_host = verify(&chain, &[entry(&both, "other.fg.svc")], "sel");
    assert!(wrong_host.is_err());
    let empty = verify(&chain, &[entry("", host)], "sel");
    assert!(empty.is_err_and(|e| e.contains("no caBundle yet")));
    let none = verify(&chain, &[], "app=x");
    assert!(none.is_err_and(|e| e.contains("labelled app=x")));
}
