//! A [`ClusterView`](crate::cluster::ClusterView) over files: what `kubectl
//! get ... -o yaml|json` writes, loaded once.
//!
//! A snapshot declares which kinds it knows by containing them: a kind with
//! no object in any file is *absent*, and facts that depend on it are
//! Unknown (so a policy's `onUnknown` decides) rather than silently "none".
//! To say "this kind is present but has no objects", include an empty typed
//! list, e.g. `{apiVersion: storage.k8s.io/v1, kind: VolumeAttachmentList,
//! items: []}`.

mod document;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use self::document::Document;
use super::index::Index;
use super::kind::Kind;
use super::object::Object;
use super::view::IndexedSource;
use super::{KindStatus, Unknown};

/// Why a snapshot could not be loaded. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no .yaml, .yml or .json files found")]
    NoFiles { path: PathBuf },
    /// Malformed YAML/JSON, or an object that does not decode as its kind.
    #[error("{path}{}: {message}", location(*line, *column))]
    Parse {
        path: PathBuf,
        /// 1-based, when the parser knows it.
        line: Option<u64>,
        column: Option<u64>,
        message: String,
    },
}

fn location(line: Option<u64>, column: Option<u64>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

/// Cluster state read from files; immutable once loaded.
#[derive(Debug, Default)]
pub struct SnapshotCluster {
    index: Index,
    present: BTreeSet<Kind>,
    files: Vec<PathBuf>,
}

impl SnapshotCluster {
    /// Load files and directories (searched recursively for `.yaml`, `.yml`
    /// and `.json`, in sorted order; hidden entries skipped). Explicitly
    /// named files are read whatever their extension. A later object with the
    /// same kind, namespace and name replaces an earlier one.
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<SnapshotCluster, SnapshotError> {
        let mut files = Vec::new();
        for path in paths {
            collect_files(path.as_ref(), &mut files)?;
        }
        let mut snapshot = SnapshotCluster::default();
        let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
        for file in &files {
            for document in read_file(file)? {
                snapshot.add_document(document, &mut skipped);
            }
        }
        for (kind, n) in &skipped {
            tracing::debug!(kind = %kind, objects = n, "snapshot: skipped objects of a kind no fact reads");
        }
        snapshot.files = files;
        tracing::info!(
            files = snapshot.files.len(),
            kinds = ?snapshot.present.iter().map(|k| k.name()).collect::<Vec<_>>(),
            pods = snapshot.index.len(Kind::Pod),
            "snapshot loaded"
        );
        Ok(snapshot)
    }

    /// Parse one YAML (multi-document) text, e.g. an inline test fixture.
    pub fn from_yaml_str(yaml: &str) -> Result<SnapshotCluster, SnapshotError> {
        let path = PathBuf::from("<inline>");
        let mut reader = yaml.as_bytes();
        let documents = read_yaml(&path, &mut reader)?;
        let mut snapshot = SnapshotCluster::default();
        let mut skipped = BTreeMap::new();
        for document in documents {
            snapshot.add_document(document, &mut skipped);
        }
        Ok(snapshot)
    }

    /// Build from objects already in memory (synthetic clusters, tests).
    /// `declared` kinds are present even without objects.
    pub fn from_objects(
        objects: impl IntoIterator<Item = Object>,
        declared: impl IntoIterator<Item = Kind>,
    ) -> SnapshotCluster {
        let mut snapshot = SnapshotCluster::default();
        snapshot.present.extend(declared);
        for object in objects {
            snapshot.present.insert(object.kind());
            snapshot.index.apply(object);
        }
        snapshot
    }

    /// Kinds this snapshot contains (or declares with an empty typed list).
    pub fn kinds(&self) -> Vec<Kind> {
        self.present.iter().copied().collect()
    }

    /// The files it was loaded from, in load order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    fn add_document(&mut self, document: Document, skipped: &mut BTreeMap<String, usize>) {
        self.present.extend(document.declared);
        for kind in document.skipped {
            *skipped.entry(kind).or_default() += 1;
        }
        for object in document.objects {
            self.present.insert(object.kind());
            self.index.apply(object);
        }
    }
}

impl IndexedSource for SnapshotCluster {
    fn read<R>(&self, f: impl FnOnce(&Index) -> R) -> R {
        f(&self.index)
    }

    fn available(&self, kind: Kind) -> Result<(), Unknown> {
        if self.present.contains(&kind) {
            Ok(())
        } else {
            Err(Unknown {
                kind: kind.name().to_owned(),
                reason: "not in the snapshot".to_owned(),
            })
        }
    }

    /// Counts cover the namespaced kinds the snapshot has; with none at all
    /// "empty" would be a guess.
    fn kinds_counted(&self) -> Result<Vec<Kind>, Unknown> {
        let kinds: Vec<Kind> = self
            .present
            .iter()
            .copied()
            .filter(|k| k.namespaced())
            .collect();
        if kinds.is_empty() {
            return Err(Unknown {
                kind: "Pod".to_owned(),
                reason: "the snapshot has no namespaced kinds to count".to_owned(),
            });
        }
        Ok(kinds)
    }

    fn ready(&self) -> bool {
        true
    }

    fn kind_status(&self) -> Vec<KindStatus> {
        Kind::ALL
            .iter()
            .map(|&kind| {
                let present = self.present.contains(&kind);
                KindStatus {
                    kind: kind.name().to_owned(),
                    synced: present,
                    objects: self.index.len(kind),
                    seconds_since_event: None,
                    stale: false,
                    last_error: (!present).then(|| "not in the snapshot".to_owned()),
                    watch_errors: 0,
                }
            })
            .collect()
    }
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}

fn has_snapshot_extension(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn collect_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), SnapshotError> {
    let read_err = |source| SnapshotError::Read {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if !meta.is_dir() {
        files.push(path.to_owned());
        return Ok(());
    }
    let before = files.len();
    walk(path, files)?;
    if files.len() == before {
        return Err(SnapshotError::NoFiles {
            path: path.to_owned(),
        });
    }
    Ok(())
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), SnapshotError> {
    let read_err = |source| SnapshotError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read_err)?;
    entries.sort();
    for entry in entries {
        if is_hidden(&entry) {
            continue;
        }
        if entry.is_dir() {
            walk(&entry, files)?;
        } else if has_snapshot_extension(&entry) {
            files.push(entry);
        }
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Vec<Document>, SnapshotError> {
    let file = File::open(path).map_err(|source| SnapshotError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    if path.extension().and_then(|e| e.to_str()) == Some("json") {
        read_json(path, reader)
    } else {
        read_yaml(path, &mut reader)
    }
}

fn read_json(path: &Path, reader: impl std::io::Read) -> Result<Vec<Document>, SnapshotError> {
    serde_json::Deserializer::from_reader(reader)
        .into_iter::<Document>()
        .map(|doc| {
            doc.map_err(|err| {
                if err.is_io() {
                    return SnapshotError::Read {
                        path: path.to_owned(),
                        source: err.into(),
                    };
                }
                let line = Some(err.line() as u64).filter(|l| *l > 0);
                let column = Some(err.column() as u64).filter(|c| *c > 0);
                SnapshotError::Parse {
                    path: path.to_owned(),
                    line,
                    column,
                    message: strip_json_position(&err.to_string()),
                }
            })
        })
        .collect()
}

/// serde_json appends " at line L column C"; the path prefix already says it.
fn strip_json_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// Snapshots are operator-provided and can be large (`kubectl get pods -A`
/// of a big cluster is one document with millions of nodes): the default
/// YAML budget is sized for config files, so it is raised, keeping the
/// alias-bomb protections.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_reader_input_bytes = None;
    budget.max_events = usize::MAX;
    budget.max_nodes = usize::MAX;
    budget.max_documents = usize::MAX;
    budget.max_total_scalar_bytes = usize::MAX;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.with_snippet = false;
    // YAML 1.2 booleans only: a node named `n` or `no` stays a string.
    options.strict_booleans = true;
    options
}

fn read_yaml(path: &Path, reader: &mut impl std::io::Read) -> Result<Vec<Document>, SnapshotError> {
    serde_saphyr::read_with_options::<_, Document>(reader, yaml_options())
        .map(|doc| {
            doc.map_err(|err| {
                let location = err.location();
                SnapshotError::Parse {
                    path: path.to_owned(),
                    line: location.map(|l| l.line()).filter(|l| *l > 0),
                    column: location.map(|l| l.column()).filter(|c| *c > 0),
                    message: yaml_message(&err),
                }
            })
        })
        .collect()
}

/// The error text without serde-saphyr's own position suffix.
fn yaml_message(err: &serde_saphyr::Error) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or_default();
    match first.rfind(" at line ") {
        Some(at) => first[..at].to_owned(),
        None => first.to_owned(),
    }
}

#[cfg(test)]
mod tests;
