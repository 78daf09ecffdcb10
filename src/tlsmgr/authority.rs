//! The pure half of self-managed TLS: reading certificates back from PEM,
//! and deciding whether the CA or the serving pair must be replaced and
//! which CAs the trust bundle keeps.

use std::fmt;

use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

/// One certificate out of a Secret, with what the decisions read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cert {
    pub der: Vec<u8>,
    pub not_after: i64,
}

impl Cert {
    pub fn from_der(der: Vec<u8>) -> Result<Self, String> {
        let not_after = {
            let (_, cert) = X509Certificate::from_der(&der).map_err(|err| err.to_string())?;
            cert.validity().not_after.timestamp()
        };
        Ok(Self { der, not_after })
    }

    /// PEM with LF line ends, as rcgen writes the certificates it issues.
    pub fn pem(&self) -> String {
        let config = pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF);
        pem::encode_config(&pem::Pem::new("CERTIFICATE", self.der.clone()), config)
    }

    fn parsed(&self) -> Option<X509Certificate<'_>> {
        X509Certificate::from_der(&self.der).ok().map(|(_, c)| c)
    }

    /// Whether `ca`'s key signed this certificate.
    pub fn signed_by(&self, ca: &Cert) -> bool {
        match (self.parsed(), ca.parsed()) {
            (Some(cert), Some(ca)) => cert.verify_signature(Some(ca.public_key())).is_ok(),
            _ => false,
        }
    }

    /// Whether `key_pem` is the private key of this certificate.
    pub fn key_matches(&self, key_pem: &str) -> bool {
        let Ok(key) = rcgen::KeyPair::from_pem(key_pem) else {
            return false;
        };
        self.parsed().is_some_and(|cert| {
            cert.public_key().subject_public_key.data.as_ref() == key.public_key_raw()
        })
    }

    /// Whether the subject alternative names include every one of `names`
    /// (DNS names, or IP addresses in text form).
    pub fn names_all(&self, names: &[String]) -> bool {
        let Some(cert) = self.parsed() else {
            return false;
        };
        let Ok(Some(san)) = cert.subject_alternative_name() else {
            return names.is_empty();
        };
        let present: Vec<String> = san
            .value
            .general_names
            .iter()
            .filter_map(|name| match name {
                GeneralName::DNSName(dns) => Some((*dns).to_owned()),
                GeneralName::IPAddress(ip) => ip_text(ip),
                _ => None,
            })
            .collect();
        names.iter().all(|name| present.contains(name))
    }
}

fn ip_text(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes)
            .ok()
            .map(|b| std::net::Ipv4Addr::from(b).to_string()),
        16 => <[u8; 16]>::try_from(bytes)
            .ok()
            .map(|b| std::net::Ipv6Addr::from(b).to_string()),
        _ => None,
    }
}

/// Every `CERTIFICATE` block of `bytes`, in order.
pub fn certificates(bytes: &[u8]) -> Result<Vec<Cert>, String> {
    let blocks = pem::parse_many(bytes).map_err(|err| err.to_string())?;
    blocks
        .into_iter()
        .filter(|block| block.tag() == "CERTIFICATE")
        .map(|block| Cert::from_der(block.into_contents()))
        .collect()
}

/// The first certificate of `bytes`, or why there is none.
pub fn first_certificate(bytes: &[u8]) -> Result<Cert, String> {
    certificates(bytes)?
        .into_iter()
        .next()
        .ok_or_else(|| "no PEM certificate".to_owned())
}

/// PEM text of `certs`, concatenated (a `caBundle`).
pub fn bundle_pem(certs: &[Cert]) -> String {
    certs.iter().map(Cert::pem).collect()
}

/// Why a CA or a serving pair is replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Unreadable, or the key does not fit.
    Invalid(String),
    /// Annotated `forcegate.dev/rotate`.
    Forced,
    /// Within the renewal window (or already expired).
    Expiring { not_after: i64 },
    /// The serving certificate was issued by another CA than the current.
    OtherCa,
    /// The serving certificate does not name every Service name.
    Names,
}

impl fmt::Display for Renewal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(why) => write!(f, "unusable ({why})"),
            Self::Forced => f.write_str("rotation requested by annotation forcegate.dev/rotate"),
            Self::Expiring { not_after } => write!(f, "expires at {not_after} (unix time)"),
            Self::OtherCa => f.write_str("issued by a CA that is no longer the current one"),
            Self::Names => f.write_str("does not name every name of the Service"),
        }
    }
}

/// When certificates count as due: `renew_before` seconds ahead of `now`.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub now: i64,
    pub renew_before: i64,
}

impl Window {
    fn due(&self, cert: &Cert) -> bool {
        cert.not_after.saturating_sub(self.renew_before) <= self.now
    }
}

/// Whether the CA (certificate and key) must be replaced.
pub fn ca_renewal(ca: &Cert, key_pem: &str, forced: bool, window: Window) -> Option<Renewal> {
    if !ca.key_matches(key_pem) {
        return Some(Renewal::Invalid(
            "the key does not fit the certificate".into(),
        ));
    }
    if forced {
        return Some(Renewal::Forced);
    }
    window.due(ca).then_some(Renewal::Expiring {
        not_after: ca.not_after,
    })
}

/// Whether the serving pair must be reissued from `ca`.
pub fn leaf_renewal(
    leaf: &Cert,
    key_pem: &str,
    ca: &Cert,
    names: &[String],
    forced: bool,
    window: Window,
) -> Option<Renewal> {
    if !leaf.key_matches(key_pem) {
        return Some(Renewal::Invalid(
            "the key does not fit the certificate".into(),
        ));
    }
    if forced {
        return Some(Renewal::Forced);
    }
    if !leaf.signed_by(ca) {
        return Some(Renewal::OtherCa);
    }
    if !leaf.names_all(names) {
        return Some(Renewal::Names);
    }
    window.due(leaf).then_some(Renewal::Expiring {
        not_after: leaf.not_after,
    })
}

/// The CAs to trust: the current one first, then every earlier one until
/// it expires, so a pair an earlier CA issued keeps verifying while
/// replicas move to a pair from the current one.
pub fn trust_bundle(current: &Cert, earlier: &[Cert], now: i64) -> Vec<Cert> {
    let mut bundle = vec![current.clone()];
    for cert in earlier {
        if cert.not_after > now && !bundle.iter().any(|kept| kept.der == cert.der) {
            bundle.push(cert.clone());
        }
    }
    bundle
}

/// The next time a check is due for these certificates (unix seconds).
pub fn next_due(certs: &[&Cert], window: Window) -> Option<i64> {
    certs
        .iter()
        .map(|cert| cert.not_after.saturating_sub(window.renew_before))
        .min()
}

#[cfg(test)]
mod tests;
