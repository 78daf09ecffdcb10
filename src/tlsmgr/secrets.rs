//! The CA and serving Secrets: read, created and replaced only when they
//! carry forcegate's label. Creates and replaces are compare-and-swap (a
//! create fails when the Secret exists, a replace carries the
//! resourceVersion read), so two writers can never both succeed.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;

use super::TlsMgrError;
use crate::certs::{CA_CERT_FILE, CERT_FILE, KEY_FILE};

/// Marks a Secret as forcegate's; the value says which one it is.
pub const CERTIFICATE_LABEL: &str = "forcegate.dev/certificate";
/// Present on a Secret: replace what it holds at the next check.
pub const ROTATE_ANNOTATION: &str = "forcegate.dev/rotate";
/// Field manager of every write.
pub const FIELD_MANAGER: &str = "forcegate-certs";

/// Which of the two Secrets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `tls.crt`/`tls.key`: the current CA; `ca.crt`: every CA trusted.
    Ca,
    /// `tls.crt`/`tls.key`: the serving pair; `ca.crt`: the CA that issued it.
    Serving,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Self::Ca => "ca",
            Self::Serving => "serving",
        }
    }
}

/// A Secret forcegate owns, as read.
#[derive(Clone, Debug)]
pub struct Owned {
    pub secret: Secret,
}

impl Owned {
    pub fn text(&self, key: &str) -> Option<String> {
        self.secret
            .data
            .as_ref()
            .and_then(|data| data.get(key))
            .and_then(|bytes| String::from_utf8(bytes.0.clone()).ok())
    }

    pub fn rotation_requested(&self) -> bool {
        self.secret
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(ROTATE_ANNOTATION))
    }
}

/// `Err(NotOurs)` unless `secret` carries the label of `role`.
pub fn owned(secret: Secret, role: Role) -> Result<Owned, TlsMgrError> {
    let value = secret
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(CERTIFICATE_LABEL));
    if value.map(String::as_str) == Some(role.label()) {
        return Ok(Owned { secret });
    }
    Err(TlsMgrError::NotOurs {
        namespace: secret.metadata.namespace.unwrap_or_default(),
        name: secret.metadata.name.unwrap_or_default(),
        value: role.label(),
    })
}

/// The Secret `name`, if it exists; an error if it is not forcegate's.
pub async fn read(api: &Api<Secret>, name: &str, role: Role) -> Result<Option<Owned>, TlsMgrError> {
    match api.get_opt(name).await? {
        Some(secret) => owned(secret, role).map(Some),
        None => Ok(None),
    }
}

/// What a write did.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    Done,
    /// Another writer got there first; read again before deciding.
    Lost,
}

/// The Secret's contents: a pair, and the CA PEM (one or a bundle).
pub fn contents(cert: &str, key: &str, ca: &str) -> BTreeMap<String, ByteString> {
    [(CERT_FILE, cert), (KEY_FILE, key), (CA_CERT_FILE, ca)]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), ByteString(v.as_bytes().to_vec())))
        .collect()
}

/// Create `name` with `data`; `Lost` when it already exists.
pub async fn create(
    api: &Api<Secret>,
    namespace: &str,
    name: &str,
    role: Role,
    data: BTreeMap<String, ByteString>,
) -> Result<Written, TlsMgrError> {
    let labels = [
        ("app.kubernetes.io/name", "forcegate"),
        ("app.kubernetes.io/managed-by", "forcegate"),
        (CERTIFICATE_LABEL, role.label()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        type_: Some("kubernetes.io/tls".to_owned()),
        data: Some(data),
        ..Secret::default()
    };
    match api.create(&params(), &secret).await {
        Ok(_) => Ok(Written::Done),
        Err(kube::Error::Api(status)) if status.is_already_exists() => Ok(Written::Lost),
        Err(err) => Err(err.into()),
    }
}

/// Replace what `owned` holds with `data` (dropping a rotation request);
/// `Lost` when the Secret changed since it was read.
pub async fn replace(
    api: &Api<Secret>,
    owned: Owned,
    data: BTreeMap<String, ByteString>,
) -> Result<Written, TlsMgrError> {
    let mut secret = owned.secret;
    let name = secret.metadata.name.clone().unwrap_or_default();
    if let Some(annotations) = secret.metadata.annotations.as_mut() {
        annotations.remove(ROTATE_ANNOTATION);
    }
    secret.data = Some(data);
    secret.string_data = None;
    match api.replace(&name, &params(), &secret).await {
        Ok(_) => Ok(Written::Done),
        Err(kube::Error::Api(status)) if status.is_conflict() => Ok(Written::Lost),
        Err(err) => Err(err.into()),
    }
}

fn params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    }
}
