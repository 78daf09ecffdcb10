//! The on-call commands' I/O edge: kubeconfig, one-shot reads of the API.
//!
//! Commands run once and exit, so nothing here watches: each read is a
//! (paged) list or a get, into the same structures a snapshot fills (a
//! [`SnapshotCluster`](crate::cluster::SnapshotCluster) view, an
//! [`Inventory`](super::inventory::Inventory)). Nothing here writes; the one
//! POST, a SelfSubjectReview, only asks who the caller is.

use std::fmt::Debug;
use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, ApiResource, ListParams, ObjectList, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{GroupVersionKind, PartialObjectMeta};
use kube::{Client, Config};
use serde::de::DeserializeOwned;

use super::OncallError;
use super::explain::User;
use super::resource::ResourceType;
use crate::cleanup::ForceDeletion;

pub mod discovery;
pub mod inventory;
pub mod target;
pub mod view;

/// How to reach the cluster, kubectl-style.
#[derive(Clone, Debug, Default)]
pub struct Connect {
    /// `--kubeconfig`; else `$KUBECONFIG`, `~/.kube/config`, in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`; else the kubeconfig's current context.
    pub context: Option<String>,
}

/// A client and what the kubeconfig says around it.
#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    /// The context's namespace (`default` when it names none): `-n`'s default.
    pub namespace: String,
    /// The API server's URL, for error messages.
    pub server: String,
}

impl Cluster {
    /// A failed read as one clear line: unreachable, forbidden, or the API's message.
    pub fn error(&self, what: &str, err: kube::Error) -> OncallError {
        match err {
            kube::Error::Api(status) => {
                OncallError::Cluster(format!("{what}: {} ({})", status.message, status.code))
            }
            other => OncallError::Cluster(format!(
                "cannot reach the API server at {} ({what}): {other}",
                self.server
            )),
        }
    }
}

/// Load the kubeconfig and build a client. No request is made yet.
pub async fn connect(options: &Connect) -> Result<Cluster, OncallError> {
    let selection = KubeConfigOptions {
        context: options.context.clone(),
        ..KubeConfigOptions::default()
    };
    let bad = |e: String| OncallError::Input(format!("kubeconfig: {e}"));
    let mut config = match (&options.kubeconfig, &options.context) {
        (Some(path), _) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
            Config::from_custom_kubeconfig(kubeconfig, &selection)
                .await
                .map_err(|e| bad(e.to_string()))?
        }
        (None, Some(_)) => Config::from_kubeconfig(&selection)
            .await
            .map_err(|e| bad(e.to_string()))?,
        (None, None) => Config::infer().await.map_err(|e| bad(e.to_string()))?,
    };
    // An on-call tool must fail fast and say so, not hang.
    config.connect_timeout = Some(Duration::from_secs(10));
    config.read_timeout = Some(Duration::from_secs(60));
    let namespace = config.default_namespace.clone();
    let server = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| bad(e.to_string()))?;
    Ok(Cluster {
        client,
        namespace,
        server,
    })
}

/// Who the kubeconfig's credentials authenticate as (`kubectl auth whoami`).
pub async fn whoami(cluster: &Cluster) -> Result<User, OncallError> {
    let api: Api<SelfSubjectReview> = Api::all(cluster.client.clone());
    let review = api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .map_err(|e| {
            cluster.error(
                "asking who you are (SelfSubjectReview); pass --as instead",
                e,
            )
        })?;
    let info = review.status.and_then(|s| s.user_info).unwrap_or_default();
    Ok(User {
        username: info.username.unwrap_or_default(),
        groups: info.groups.unwrap_or_default(),
    })
}

/// Every ForceDeletion record.
pub async fn records(cluster: &Cluster) -> Result<Vec<ForceDeletion>, OncallError> {
    let api: Api<ForceDeletion> = Api::all(cluster.client.clone());
    list_all(&api).await.map_err(|e| {
        cluster.error(
            "listing forcedeletions.forcegate.dev (is the CRD installed?)",
            e,
        )
    })
}

/// All pages of a list.
pub async fn list_all<K>(api: &Api<K>) -> Result<Vec<K>, kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    paged(|params| async move { api.list(&params).await }).await
}

/// All pages of a metadata-only list.
pub async fn list_metadata_all<K>(api: &Api<K>) -> Result<Vec<PartialObjectMeta<K>>, kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    paged(|params| async move { api.list_metadata(&params).await }).await
}

/// Follow `continue` tokens until the list is complete.
async fn paged<T, F, Fut>(mut page: F) -> Result<Vec<T>, kube::Error>
where
    T: Clone,
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<ObjectList<T>, kube::Error>>,
{
    let mut items = Vec::new();
    let mut params = ListParams::default().limit(500);
    loop {
        let list = page(params.clone()).await?;
        items.extend(list.items);
        match list.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(items),
        }
    }
}

/// kube's name for a served type.
pub fn api_resource(rt: &ResourceType) -> ApiResource {
    let gvk = GroupVersionKind::gvk(&rt.group, &rt.version, &rt.kind);
    ApiResource::from_gvk_with_plural(&gvk, &rt.plural)
}

/// A list that may be refused: a 4xx answer is a gap to report, anything
/// else (unreachable, 5xx) fails the command.
pub fn refused(err: &kube::Error) -> Option<String> {
    match err {
        kube::Error::Api(status) if (400..500).contains(&status.code) => {
            Some(format!("{} ({})", status.message, status.code))
        }
        _ => None,
    }
}
