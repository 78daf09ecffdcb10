//! Which resource types the API server serves, from aggregated discovery
//! (two requests; GA in Kubernetes 1.30). A group whose aggregated API
//! server cannot be reached is reported `Stale`: that is exactly what keeps
//! the namespace controller from finishing, so it becomes a gap, not an error.

use kube::client::APIGroupDiscovery;

use super::Cluster;
use crate::oncall::OncallError;
use crate::oncall::inventory::Gap;
use crate::oncall::resource::ResourceType;

/// A served type and the verbs it supports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    pub resource: ResourceType,
    pub verbs: Vec<String>,
}

impl Served {
    pub fn lists(&self) -> bool {
        self.verbs.iter().any(|v| v == "list")
    }
}

/// Every served type (core first), and the groups whose discovery is stale.
pub async fn discover(cluster: &Cluster) -> Result<(Vec<Served>, Vec<Gap>), OncallError> {
    let core = (cluster.client.list_core_api_versions_aggregated().await)
        .map_err(|e| cluster.error("discovering the core API", e))?;
    let groups = (cluster.client.list_api_groups_aggregated().await)
        .map_err(|e| cluster.error("discovering API groups", e))?;
    if core.items.is_empty() {
        return Err(OncallError::Cluster(format!(
            "{} does not serve aggregated discovery (Kubernetes 1.30 or newer is needed)",
            cluster.server
        )));
    }
    Ok(served(core.items.iter().chain(&groups.items)))
}

/// Types from discovery documents: for each group the preferred (first)
/// version that is not stale, plus types only older versions serve.
pub fn served<'a>(groups: impl Iterator<Item = &'a APIGroupDiscovery>) -> (Vec<Served>, Vec<Gap>) {
    let (mut types, mut gaps): (Vec<Served>, Vec<Gap>) = (Vec::new(), Vec::new());
    for group in groups {
        let name = group
            .metadata
            .as_ref()
            .and_then(|m| m.name.clone())
            .unwrap_or_default();
        let mut taken: Vec<String> = Vec::new();
        for version in &group.versions {
            let v = version.version.clone().unwrap_or_default();
            if version.freshness.as_deref() == Some("Stale") {
                let gv = if name.is_empty() {
                    v.clone()
                } else {
                    format!("{name}/{v}")
                };
                gaps.push(Gap {
                    what: format!("discovery {gv}"),
                    reason: "stale: the API server cannot reach the API service behind it".into(),
                });
                continue;
            }
            for r in &version.resources {
                let plural = r.resource.clone().unwrap_or_default();
                if plural.is_empty() || plural.contains('/') || taken.contains(&plural) {
                    continue;
                }
                taken.push(plural.clone());
                let kind = r
                    .response_kind
                    .as_ref()
                    .and_then(|k| k.kind.clone())
                    .unwrap_or_default();
                types.push(Served {
                    resource: ResourceType {
                        group: name.clone(),
                        version: v.clone(),
                        singular: r
                            .singular_resource
                            .clone()
                            .unwrap_or_else(|| kind.to_lowercase()),
                        kind,
                        plural,
                        short_names: r.short_names.clone(),
                        namespaced: r.scope.as_deref() == Some("Namespaced"),
                    },
                    verbs: r.verbs.clone(),
                });
            }
        }
    }
    (types, gaps)
}

#[cfg(test)]
mod tests;
