//! Standalone backend: an append-only, fsynced JSON-lines journal.
//!
//! Each line is a complete `ForceDeletion` object (apiVersion, kind, metadata,
//! spec), so a journal can later be replayed into a cluster with `kubectl
//! create`. A line is appended with one write and `fdatasync` before the
//! admission call returns, so an acknowledged record survives a crash. A crash
//! mid-write can only tear the *last* line: replay skips it with a warning and
//! truncates it away so the next append starts on a clean line. A bad line
//! anywhere else is corruption, not a crash artifact, and opening fails.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::crd::{ForceDeletion, ForceDeletionSpec};
use super::metrics::{Backend, CleanupMetrics, RecordResult};
use super::{RecordError, Recorder, record_name_for};

/// What replay found when the journal was opened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Complete records recovered.
    pub records: usize,
    /// The torn last line that was skipped and truncated away, if any.
    pub torn: Option<TornTail>,
}

/// A partial last line left by a crash mid-write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset where it started (the journal is truncated to this length).
    pub offset: u64,
    pub bytes: u64,
    pub reason: String,
}

/// Create-or-get records in a journal file. Cheap to clone.
#[derive(Clone)]
pub struct JournalRecorder {
    inner: Arc<Inner>,
    metrics: Option<CleanupMetrics>,
}

struct Inner {
    path: PathBuf,
    recovery: Recovery,
    /// Readers (lookups of existing records, the repeated admission call
    /// of a grace-0 delete) share it; an append holds it for its fsync.
    state: RwLock<State>,
}

struct State {
    /// Holds the exclusive lock for the process's lifetime.
    file: File,
    /// Length of the journal's valid prefix (rolled back to on a failed write).
    len: u64,
    records: BTreeMap<String, ForceDeletion>,
}

impl JournalRecorder {
    /// Open (or create) the journal and replay it. Fails when another process
    /// holds it, or when a line other than the last is corrupt.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| RecordError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let existed = std::fs::symlink_metadata(&path).is_ok();
        let mut file = open_private(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(RecordError::Locked {
                    path: path.display().to_string(),
                });
            }
            Err(TryLockError::Error(err)) => return Err(io(err)),
        }
        if !existed {
            sync_parent(&path).map_err(io)?;
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let replay = replay(&bytes, &path)?;
        let mut len = bytes.len() as u64;
        if let Some(torn) = &replay.recovery.torn {
            tracing::warn!(
                journal = %path.display(),
                line = torn.line,
                offset = torn.offset,
                bytes = torn.bytes,
                reason = %torn.reason,
                "skipping torn last line of the cleanup journal (crash mid-write); truncating it"
            );
            file.set_len(torn.offset).map_err(io)?;
            len = torn.offset;
        }
        if replay.missing_newline {
            // The last record is complete but its newline never made it.
            file.write_all(b"\n").map_err(io)?;
            len += 1;
        }
        if replay.recovery.torn.is_some() || replay.missing_newline {
            file.sync_data().map_err(io)?;
        }
        tracing::info!(
            journal = %path.display(),
            records = replay.recovery.records,
            "cleanup journal replayed"
        );
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                recovery: replay.recovery,
                state: RwLock::new(State {
                    file,
                    len,
                    records: replay.records,
                }),
            }),
            metrics: None,
        })
    }

    /// Count records written in `forcegate_cleanup_records_total`.
    pub fn with_metrics(mut self, metrics: CleanupMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// What replay found at open.
    pub fn recovery(&self) -> &Recovery {
        &self.inner.recovery
    }

    pub fn get(&self, name: &str) -> Option<ForceDeletion> {
        self.inner.read().records.get(name).cloned()
    }

    /// All records, ordered by name.
    pub fn records(&self) -> Vec<ForceDeletion> {
        self.inner.read().records.values().cloned().collect()
    }

    /// Create-or-get, blocking (fsync). Returns the name and whether it was new.
    pub fn record_blocking(&self, spec: ForceDeletionSpec) -> Result<(String, bool), RecordError> {
        self.inner.append(spec)
    }
}

impl Inner {
    // Appends roll back on failure, so the state is consistent even if a
    // holder panicked: a poisoned lock is used as is.
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The name of an existing record for `spec`, without waiting: `None`
    /// when absent or when a writer holds the lock (mid-fsync), in which case
    /// the caller takes the blocking path. Keeps the repeated admission call
    /// of a grace-0 delete (and retries) off the blocking pool; concurrent
    /// lookups share the lock, so only an fsync in flight sends one there.
    fn existing(&self, spec: &ForceDeletionSpec) -> Option<String> {
        let name = record_name_for(spec);
        let held = match self.state.try_read() {
            Ok(state) => state.records.contains_key(&name),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                poisoned.into_inner().records.contains_key(&name)
            }
            Err(std::sync::TryLockError::WouldBlock) => false,
        };
        held.then_some(name)
    }

    fn append(&self, spec: ForceDeletionSpec) -> Result<(String, bool), RecordError> {
        let name = record_name_for(&spec);
        let mut state = self.write();
        if state.records.contains_key(&name) {
            return Ok((name, false));
        }
        let mut record = ForceDeletion::new(&name, spec);
        record.metadata.creation_timestamp = Some(Time(Timestamp::now()));
        let mut line = serde_json::to_vec(&record)?;
        line.push(b'\n');
        let io = |source| RecordError::Io {
            path: self.path.display().to_string(),
            source,
        };
        let written = state
            .file
            .write_all(&line)
            .and_then(|()| state.file.sync_data());
        if let Err(err) = written {
            // Never leave a partial line for the next append to glue onto.
            let len = state.len;
            if let Err(rollback) = state.file.set_len(len) {
                tracing::error!(journal = %self.path.display(), error = %rollback, "cannot roll back a failed journal append");
            }
            return Err(io(err));
        }
        state.len += line.len() as u64;
        state.records.insert(name.clone(), record);
        Ok((name, true))
    }
}

impl Recorder for JournalRecorder {
    fn record(&self, spec: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>> {
        let this = self.clone();
        Box::pin(async move {
            let started = Instant::now();
            let result = match this.inner.existing(&spec) {
                Some(name) => Ok((name, false)),
                None => tokio::task::spawn_blocking(move || this.inner.append(spec))
                    .await
                    .map_err(|err| {
                        RecordError::Backend(format!("journal writer task failed: {err}"))
                    })
                    .and_then(|r| r),
            };
            if let Some(metrics) = &self.metrics {
                let outcome = match &result {
                    Ok((_, true)) => RecordResult::Created,
                    Ok((_, false)) => RecordResult::Existing,
                    Err(_) => RecordResult::Error,
                };
                metrics.observe_record(Backend::Journal, outcome, started.elapsed().as_secs_f64());
            }
            result.map(|(name, _)| name)
        })
    }
}

/// Every record in the journal at `path`, read without its lock (a running
/// `serve` holds that) and without repairing anything: for `forcegate
/// records`. A torn last line is skipped, as replay skips it.
pub fn read(path: impl AsRef<Path>) -> Result<Vec<ForceDeletion>, RecordError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| RecordError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(replay(&bytes, path)?.records.into_values().collect())
}

struct Replay {
    records: BTreeMap<String, ForceDeletion>,
    recovery: Recovery,
    /// The last record parsed but had no trailing newline.
    missing_newline: bool,
}

/// Parse the journal. Only the final line may be torn.
fn replay(bytes: &[u8], path: &Path) -> Result<Replay, RecordError> {
    let mut records = BTreeMap::new();
    let mut recovery = Recovery::default();
    let mut missing_newline = false;
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let rest = &bytes[offset..];
        let (line, terminated) = match rest.iter().position(|b| *b == b'\n') {
            Some(end) => (&rest[..end], true),
            None => (rest, false),
        };
        let next = offset + line.len() + usize::from(terminated);
        let is_last = bytes[next..]
            .iter()
            .all(|b| b.is_ascii_whitespace() || *b == 0);
        if line.iter().all(u8::is_ascii_whitespace) && terminated {
            offset = next;
            continue;
        }
        match parse_line(line) {
            Ok(record) => {
                let name = record.name_any();
                // First write wins, as with create-or-get on the API server.
                records.entry(name).or_insert(record);
                missing_newline = !terminated;
            }
            Err(reason) if is_last => {
                recovery.torn = Some(TornTail {
                    line: line_no,
                    offset: offset as u64,
                    bytes: (bytes.len() - offset) as u64,
                    reason,
                });
                break;
            }
            Err(reason) => {
                return Err(RecordError::Corrupt {
                    path: path.display().to_string(),
                    line: line_no,
                    reason,
                });
            }
        }
        offset = next;
    }
    recovery.records = records.len();
    Ok(Replay {
        records,
        recovery,
        missing_newline,
    })
}

fn parse_line(line: &[u8]) -> Result<ForceDeletion, String> {
    let record: ForceDeletion = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    if record.metadata.name.as_deref().is_none_or(str::is_empty) {
        return Err("record has no metadata.name".into());
    }
    Ok(record)
}

/// Open (or create, mode 0600: records name users, pods and break-glass
/// reasons) without following a symbolic link at `path`: one planted there
/// would send the records wherever it points. An existing journal that
/// others may read is narrowed to 0600.
fn open_private(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        let file = options.open(path).map_err(|err| {
            if err.raw_os_error() == Some(libc::ELOOP) {
                std::io::Error::new(
                    err.kind(),
                    "is a symbolic link; refusing to follow it (point --journal at the real file)",
                )
            } else {
                err
            }
        })?;
        let mode = file.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            tracing::info!(journal = %path.display(), mode = format!("{:o}", mode & 0o777), "cleanup journal was readable by others; narrowed to 0600");
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// A new file's directory entry must be durable too, or the whole journal can
/// vanish with a crash right after creation.
fn sync_parent(path: &Path) -> std::io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)?.sync_all()
}

#[cfg(test)]
mod tests;
