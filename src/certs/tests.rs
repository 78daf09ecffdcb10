use super::*;
use x509_parser::extensions::GeneralName;
use x509_parser::pem::parse_x509_pem;

fn parse<T>(
    pem: &str,
    check: impl FnOnce(&x509_parser::certificate::X509Certificate<'_>) -> T,
) -> T {
    let (_, pem) = parse_x509_pem(pem.as_bytes()).expect("PEM");
    let cert = pem.parse_x509().expect("X.509");
    check(&cert)
}

#[test]
fn leaf_has_service_sans_and_a_distinct_subject() {
    let bundle = generate("forcegate", "forcegate-system", 30).expect("generate");
    let ca_subject = parse(&bundle.ca_cert_pem, |ca| {
        assert!(ca.is_ca());
        ca.subject().to_string()
    });
    parse(&bundle.leaf.cert_pem, |leaf| {
        assert!(!leaf.is_ca());
        assert_ne!(leaf.subject().to_string(), ca_subject);
        assert_eq!(leaf.issuer().to_string(), ca_subject);
        let san = leaf
            .subject_alternative_name()
            .expect("SAN parses")
            .expect("SAN present");
        let mut dns = Vec::new();
        let mut ips = Vec::new();
        for name in &san.value.general_names {
            match name {
                GeneralName::DNSName(n) => dns.push((*n).to_owned()),
                GeneralName::IPAddress(ip) => ips.push(ip.to_vec()),
                _ => {}
            }
        }
        assert_eq!(
            dns,
            vec![
                "forcegate",
                "forcegate.forcegate-system",
                "forcegate.forcegate-system.svc",
                "forcegate.forcegate-system.svc.cluster.local",
                "localhost",
            ]
        );
        assert_eq!(ips, vec![vec![127, 0, 0, 1]]);
        let validity = leaf.validity();
        let lifetime = validity.not_after.timestamp() - validity.not_before.timestamp();
        assert_eq!(lifetime, 30 * 86_400 + 3600);
    });
}

#[test]
fn each_leaf_gets_a_new_serial() {
    let ca = Authority::generate("svc", "ns", 1).expect("ca");
    let a = ca.issue("svc", "ns", 1).expect("leaf");
    let b = ca.issue("svc", "ns", 1).expect("leaf");
    let serial = |pem: &str| parse(pem, |c| c.raw_serial().to_vec());
    assert_ne!(serial(&a.cert_pem), serial(&b.cert_pem));
}

#[test]
fn ca_bundle_is_base64_of_the_ca_pem() {
    let bundle = generate("svc", "ns", 1).expect("generate");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(bundle.ca_bundle())
        .expect("base64");
    assert_eq!(decoded, bundle.ca_cert_pem.as_bytes());
}

#[test]
fn writes_files_once_and_keeps_existing_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("certs");
    assert!(ensure_dev_certs(&target, "svc", "ns").expect("create"));
    let first = fs::read(target.join(CERT_FILE)).expect("tls.crt");
    assert!(!ensure_dev_certs(&target, "svc", "ns").expect("keep"));
    assert_eq!(fs::read(target.join(CERT_FILE)).expect("tls.crt"), first);
    for file in [CA_CERT_FILE, CA_KEY_FILE, KEY_FILE] {
        assert!(target.join(file).is_file(), "{file}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(target.join(KEY_FILE))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn client_certificates_are_for_client_auth_only() {
    use x509_parser::extensions::ParsedExtension;
    let ca = Authority::generate("svc", "ns", 1).expect("ca");
    let client = ca.issue_client("kube-apiserver", 1).expect("client");
    parse(&client.cert_pem, |cert| {
        assert!(!cert.is_ca());
        assert!(cert.subject().to_string().contains("CN=kube-apiserver"));
        let eku = cert
            .extensions()
            .iter()
            .find_map(|e| match e.parsed_extension() {
                ParsedExtension::ExtendedKeyUsage(eku) => Some(eku.clone()),
                _ => None,
            })
            .expect("extended key usage");
        assert!(eku.client_auth && !eku.server_auth);
    });
}

#[test]
fn rejects_zero_days() {
    assert!(matches!(
        generate("svc", "ns", 0),
        Err(CertError::Validity { days: 0 })
    ));
}
