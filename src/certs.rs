//! A private CA and a serving certificate for the webhook Service.
//!
//! kube-apiserver dials `https://<svc>.<ns>.svc:443` and verifies the serving
//! certificate against the webhook's `caBundle`, so the leaf carries every
//! name the Service is reachable by (plus `localhost`/`127.0.0.1` for local
//! runs) and is signed by a CA with a *different* subject: a leaf whose
//! subject equals its issuer's looks self-signed to Go's verifier.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

mod files;

use files::{Access, write_atomic};

/// Files written by [`write`], as a mounted `kubernetes.io/tls` Secret (plus the CA).
pub const CA_CERT_FILE: &str = "ca.crt";
pub const CA_KEY_FILE: &str = "ca.key";
pub const CERT_FILE: &str = "tls.crt";
pub const KEY_FILE: &str = "tls.key";

/// Backdating absorbs clock skew between this host and the API server.
const BACKDATE: Duration = Duration::from_secs(3600);

#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("invalid certificate parameters: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("validity of {days} days is out of range")]
    Validity { days: u32 },
    #[error("{path} is a symbolic link; refusing to write through it (remove it first)")]
    Symlink { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A CA able to issue serving certificates (kept in memory; rotation tests
/// issue several leaves from one CA, as cert-manager would).
pub struct Authority {
    issuer: Issuer<'static, KeyPair>,
    cert_pem: String,
    key_pem: String,
}

/// A serving certificate and its key, PEM-encoded.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
}

/// What `forcegate certs` writes: the CA and one serving leaf.
#[derive(Clone, Debug)]
pub struct Bundle {
    pub ca_cert_pem: String,
    pub ca_key_pem: String,
    pub leaf: Leaf,
}

impl Authority {
    /// A fresh CA named after the service it serves.
    pub fn generate(service: &str, namespace: &str, days: u32) -> Result<Self, CertError> {
        let mut params = CertificateParams::default();
        params.distinguished_name = name(&format!("forcegate CA for {service}.{namespace}"));
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        set_validity(&mut params, days)?;
        let key = KeyPair::generate()?;
        let cert_pem = params.self_signed(&key)?.pem();
        let key_pem = key.serialize_pem();
        let issuer = Issuer::new(params, key);
        Ok(Self {
            issuer,
            cert_pem,
            key_pem,
        })
    }

    /// A CA kept elsewhere (a Secret), to issue more leaves from. The key is
    /// not checked against the certificate here: callers that read both
    /// from storage compare public keys first.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, CertError> {
        let key = KeyPair::from_pem(key_pem)?;
        let issuer = Issuer::from_ca_cert_pem(cert_pem, key)?;
        Ok(Self {
            issuer,
            cert_pem: cert_pem.to_owned(),
            key_pem: key_pem.to_owned(),
        })
    }

    pub fn cert_pem(&self) -> String {
        self.cert_pem.clone()
    }

    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// A serving certificate for `<service>.<namespace>` (fresh key, so a
    /// fresh serial: rcgen derives it from the public key).
    pub fn issue(&self, service: &str, namespace: &str, days: u32) -> Result<Leaf, CertError> {
        let names = service_names(service, namespace);
        let subject = format!("{service}.{namespace}.svc");
        self.leaf(names, &subject, ExtendedKeyUsagePurpose::ServerAuth, days)
    }

    /// A client certificate with common name `name` (also its one DNS
    /// name), for a TLS client such as kube-apiserver calling the webhook
    /// with `forcegate serve --client-ca-file`.
    pub fn issue_client(&self, name: &str, days: u32) -> Result<Leaf, CertError> {
        let names = vec![name.to_owned()];
        self.leaf(names, name, ExtendedKeyUsagePurpose::ClientAuth, days)
    }

    fn leaf(
        &self,
        names: Vec<String>,
        common_name: &str,
        usage: ExtendedKeyUsagePurpose,
        days: u32,
    ) -> Result<Leaf, CertError> {
        let mut params = CertificateParams::new(names)?;
        params.distinguished_name = name(common_name);
        params.is_ca = IsCa::ExplicitNoCa;
        // ECDSA keys sign the handshake; they never encipher keys.
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        set_validity(&mut params, days)?;
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// Every name the API server or a local client may dial.
pub fn service_names(service: &str, namespace: &str) -> Vec<String> {
    vec![
        service.to_owned(),
        format!("{service}.{namespace}"),
        format!("{service}.{namespace}.svc"),
        format!("{service}.{namespace}.svc.cluster.local"),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
    ]
}

/// A CA and a serving leaf for the Service.
pub fn generate(service: &str, namespace: &str, days: u32) -> Result<Bundle, CertError> {
    let authority = Authority::generate(service, namespace, days)?;
    let leaf = authority.issue(service, namespace, days)?;
    Ok(Bundle {
        ca_cert_pem: authority.cert_pem(),
        ca_key_pem: authority.key_pem().to_owned(),
        leaf,
    })
}

impl Bundle {
    /// The webhook configuration's `caBundle`: base64 of the CA's PEM.
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_cert_pem)
    }
}

/// Write the bundle into `dir` (created if needed). Each file is written to
/// a temporary name of its own and renamed, so a watching server never reads
/// half a file; keys are readable by the owner only; a symbolic link in
/// place of a file is refused (see [`files`]).
pub fn write(dir: &Path, bundle: &Bundle) -> Result<(), CertError> {
    fs::create_dir_all(dir).map_err(|source| io(dir, source))?;
    write_atomic(&dir.join(CA_CERT_FILE), &bundle.ca_cert_pem, Access::Public)?;
    write_atomic(&dir.join(CA_KEY_FILE), &bundle.ca_key_pem, Access::Owner)?;
    write_leaf(dir, &bundle.leaf)
}

/// Write `tls.key` then `tls.crt` into `dir`, each atomically.
pub fn write_leaf(dir: &Path, leaf: &Leaf) -> Result<(), CertError> {
    fs::create_dir_all(dir).map_err(|source| io(dir, source))?;
    write_atomic(&dir.join(KEY_FILE), &leaf.key_pem, Access::Owner)?;
    write_atomic(&dir.join(CERT_FILE), &leaf.cert_pem, Access::Public)
}

/// Create development certificates in `dir` unless a serving pair is already
/// there. Returns whether it created them.
pub fn ensure_dev_certs(dir: &Path, service: &str, namespace: &str) -> Result<bool, CertError> {
    if dir.join(CERT_FILE).exists() && dir.join(KEY_FILE).exists() {
        return Ok(false);
    }
    write(dir, &generate(service, namespace, 365)?)?;
    Ok(true)
}

fn io(path: &Path, source: std::io::Error) -> CertError {
    CertError::Io {
        path: path.to_owned(),
        source,
    }
}

fn name(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "forcegate");
    dn.push(DnType::CommonName, common_name);
    dn
}

fn set_validity(params: &mut CertificateParams, days: u32) -> Result<(), CertError> {
    if days == 0 || days > 36_500 {
        return Err(CertError::Validity { days });
    }
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    let now = epoch + since_epoch;
    params.not_before = now - BACKDATE;
    params.not_after = now + Duration::from_secs(u64::from(days) * 86_400);
    Ok(())
}

#[cfg(test)]
mod tests;
