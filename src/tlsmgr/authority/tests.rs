use super::*;
use crate::certs::{Authority, service_names};

const DAY: i64 = 86_400;

fn cert(pem: &str) -> Cert {
    first_certificate(pem.as_bytes()).expect("parses")
}

fn now() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs(),
    )
    .expect("fits")
}

fn window(days_ahead: i64) -> Window {
    Window {
        now: now() + days_ahead * DAY,
        renew_before: 90 * DAY,
    }
}

#[test]
fn bundles_round_trip_through_pem() {
    let a = Authority::generate("svc", "ns", 10).expect("CA");
    let b = Authority::generate("svc", "ns", 10).expect("CA");
    let certs = vec![cert(&a.cert_pem()), cert(&b.cert_pem())];
    let text = bundle_pem(&certs);
    assert_eq!(certificates(text.as_bytes()).expect("parses"), certs);
    assert!(first_certificate(b"no pem here").is_err());
    assert!(certificates(b"").expect("empty is no error").is_empty());
}

#[test]
fn a_fresh_ca_is_kept_until_its_window_or_a_request() {
    let ca = Authority::generate("svc", "ns", 3650).expect("CA");
    let parsed = cert(&ca.cert_pem());
    assert_eq!(ca_renewal(&parsed, ca.key_pem(), false, window(0)), None);
    assert_eq!(
        ca_renewal(&parsed, ca.key_pem(), true, window(0)),
        Some(Renewal::Forced)
    );
    // 3650 days on, 90 days before the end: due.
    assert!(matches!(
        ca_renewal(&parsed, ca.key_pem(), false, window(3650 - 89)),
        Some(Renewal::Expiring { .. })
    ));
    assert_eq!(
        ca_renewal(&parsed, ca.key_pem(), false, window(3650 - 91)),
        None
    );
    let other = Authority::generate("svc", "ns", 1).expect("CA");
    assert!(matches!(
        ca_renewal(&parsed, other.key_pem(), false, window(0)),
        Some(Renewal::Invalid(_))
    ));
}

#[test]
fn a_leaf_is_reissued_for_a_new_ca_missing_names_or_its_window() {
    let ca = Authority::generate("svc", "ns", 3650).expect("CA");
    let ca_cert = cert(&ca.cert_pem());
    let names = service_names("svc", "ns");
    let leaf = ca.issue("svc", "ns", 365).expect("leaf");
    let parsed = cert(&leaf.cert_pem);
    let due = |forced, window, ca: &Cert, names: &[String]| {
        leaf_renewal(&parsed, &leaf.key_pem, ca, names, forced, window)
    };
    assert_eq!(due(false, window(0), &ca_cert, &names), None);
    assert_eq!(
        due(true, window(0), &ca_cert, &names),
        Some(Renewal::Forced)
    );
    assert!(matches!(
        due(false, window(365 - 89), &ca_cert, &names),
        Some(Renewal::Expiring { .. })
    ));
    let next = Authority::generate("svc", "ns", 3650).expect("CA");
    assert_eq!(
        due(false, window(0), &cert(&next.cert_pem()), &names),
        Some(Renewal::OtherCa)
    );
    let renamed = service_names("other", "ns");
    assert_eq!(
        due(false, window(0), &ca_cert, &renamed),
        Some(Renewal::Names)
    );
    let stranger = ca.issue("svc", "ns", 365).expect("leaf");
    assert!(matches!(
        leaf_renewal(
            &parsed,
            &stranger.key_pem,
            &ca_cert,
            &names,
            false,
            window(0)
        ),
        Some(Renewal::Invalid(_))
    ));
}

#[test]
fn the_bundle_keeps_earlier_cas_until_they_expire() {
    let old = cert(&Authority::generate("svc", "ns", 30).expect("CA").cert_pem());
    let new = cert(
        &Authority::generate("svc", "ns", 3650)
            .expect("CA")
            .cert_pem(),
    );
    let bundle = trust_bundle(&new, &[new.clone(), old.clone()], now());
    assert_eq!(bundle, vec![new.clone(), old.clone()]);
    // Once the old CA has expired it leaves the bundle.
    let later = now() + 31 * DAY;
    assert_eq!(
        trust_bundle(&new, std::slice::from_ref(&old), later),
        vec![new.clone()]
    );
    assert_eq!(
        next_due(&[&new, &old], window(0)),
        Some(old.not_after - 90 * DAY)
    );
}
