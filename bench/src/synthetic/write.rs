//! Writing a synthetic cluster as kubectl-shaped snapshot files.

use std::io::Write;
use std::path::{Path, PathBuf};

use forcegate::cluster::Kind;
use serde_json::Value;

use super::{KINDS, SyntheticCluster};

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
        let items = items(cluster, kind).map_err(std::io::Error::other)?;
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

/// The objects of `kind`, as JSON (none for ConfigMaps and Endpoints).
fn items(cluster: &SyntheticCluster, kind: Kind) -> Result<Vec<Value>, serde_json::Error> {
    fn json<T: serde::Serialize>(objects: &[T]) -> Result<Vec<Value>, serde_json::Error> {
        objects.iter().map(serde_json::to_value).collect()
    }
    match kind {
        Kind::Pod => json(&cluster.pods),
        Kind::Node => json(&cluster.nodes),
        Kind::Lease => json(&cluster.leases),
        Kind::VolumeAttachment => json(&cluster.attachments),
        Kind::PersistentVolumeClaim => json(&cluster.claims),
        Kind::PersistentVolume => json(&cluster.volumes),
        Kind::Job => json(&cluster.jobs),
        Kind::CronJob => json(&cluster.cron_jobs),
        Kind::StatefulSet => json(&cluster.stateful_sets),
        Kind::ReplicaSet => json(&cluster.replica_sets),
        Kind::Deployment => json(&cluster.deployments),
        Kind::EndpointSlice => json(&cluster.slices),
        Kind::Namespace => json(&cluster.namespaces),
        Kind::ConfigMap | Kind::Endpoints => Ok(Vec::new()),
    }
}
