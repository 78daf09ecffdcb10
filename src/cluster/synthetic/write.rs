//! Writing a synthetic cluster as kubectl-shaped snapshot files.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{KINDS, SyntheticCluster};
use crate::cluster::object::Object;

/// On-disk format of a written snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// Write `cluster` as kubectl-shaped `List` files, one per kind (typed
/// `<Kind>List` so kinds without objects are still declared present).
/// Returns the files written.
pub fn write_snapshot(
    cluster: &SyntheticCluster,
    dir: &Path,
    format: Format,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    for kind in KINDS {
        let items: Vec<serde_json::Value> = cluster
            .objects
            .iter()
            .filter(|o| o.kind() == kind)
            .map(object_json)
            .collect::<Result<_, _>>()
            .map_err(std::io::Error::other)?;
        let api_version = match kind.group() {
            "" => "v1".to_owned(),
            group => format!("{group}/v1"),
        };
        let list = serde_json::json!({
            "apiVersion": api_version,
            "kind": format!("{}List", kind.name()),
            "metadata": {"resourceVersion": "1"},
            "items": items,
        });
        let ext = match format {
            Format::Json => "json",
            Format::Yaml => "yaml",
        };
        let path = dir.join(format!("{}.{ext}", kind.resource()));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        match format {
            Format::Json => {
                serde_json::to_writer(&mut out, &list).map_err(std::io::Error::other)?
            }
            Format::Yaml => {
                serde_saphyr::to_io_writer(&mut out, &list).map_err(std::io::Error::other)?
            }
        }
        out.flush()?;
        files.push(path);
    }
    Ok(files)
}

fn object_json(object: &Object) -> Result<serde_json::Value, serde_json::Error> {
    match object {
        Object::Pod(o) => serde_json::to_value(o),
        Object::Node(o) => serde_json::to_value(o),
        Object::Lease(o) => serde_json::to_value(o),
        Object::VolumeAttachment(o) => serde_json::to_value(o),
        Object::PersistentVolumeClaim(o) => serde_json::to_value(o),
        Object::PersistentVolume(o) => serde_json::to_value(o),
        Object::Job(o) => serde_json::to_value(o),
        Object::CronJob(o) => serde_json::to_value(o),
        Object::StatefulSet(o) => serde_json::to_value(o),
        Object::ReplicaSet(o) => serde_json::to_value(o),
        Object::Deployment(o) => serde_json::to_value(o),
        Object::EndpointSlice(o) => serde_json::to_value(o),
        Object::Namespace(o) => serde_json::to_value(o),
        Object::ConfigMap(m) => serde_json::to_value(k8s_openapi::api::core::v1::ConfigMap {
            metadata: (**m).clone(),
            ..Default::default()
        }),
        Object::Endpoints(m) => serde_json::to_value(k8s_openapi::api::core::v1::Endpoints {
            metadata: (**m).clone(),
            ..Default::default()
        }),
    }
}
