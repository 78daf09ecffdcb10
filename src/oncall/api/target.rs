//! `RESOURCE NAME` resolved through discovery and read with one get.

use kube::api::{Api, DynamicObject};

use super::Cluster;
use super::discovery::discover;
use crate::oncall::OncallError;
use crate::oncall::explain::Target;
use crate::oncall::resource::{self, ResourceType};

/// The object `name` of type `resource_name`, in `namespace` when namespaced.
pub async fn get(
    cluster: &Cluster,
    resource_name: &str,
    namespace: &str,
    name: &str,
) -> Result<Target, OncallError> {
    let (served, _) = discover(cluster).await?;
    let types: Vec<ResourceType> = served.into_iter().map(|s| s.resource).collect();
    let rt = resource::resolve(resource_name, &types)?;
    let api_resource = super::api_resource(rt);
    let api: Api<DynamicObject> = if rt.namespaced {
        Api::namespaced_with(cluster.client.clone(), namespace, &api_resource)
    } else {
        Api::all_with(cluster.client.clone(), &api_resource)
    };
    let found = (api.get_opt(name).await)
        .map_err(|e| cluster.error(&format!("reading {} {name}", rt.plural), e))?;
    let Some(object) = found else {
        let place = if rt.namespaced {
            format!(" in namespace \"{namespace}\"")
        } else {
            String::new()
        };
        return Err(OncallError::Input(format!(
            "{} \"{name}\" not found{place}",
            rt.plural
        )));
    };
    let mut value = serde_json::to_value(&object).map_err(|e| OncallError::Input(e.to_string()))?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), api_resource.api_version.clone().into());
        map.insert("kind".into(), rt.kind.clone().into());
    }
    Ok(resource::target(rt, value))
}
