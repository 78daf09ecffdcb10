//! Writing certificate files without trusting what is already in the
//! directory.
//!
//! Each file is written to a temporary name of its own (the process id and a
//! counter: two writers, in one process or two, never share one), created
//! with `O_CREAT | O_EXCL | O_NOFOLLOW` and its final mode, synced, then
//! renamed over the destination. `rename` replaces a symbolic link rather
//! than writing through it, and a symbolic link found at the destination is
//! refused outright: it was not put there by us.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{CertError, io};

/// Temporary names tried before giving up (stale ones from a crashed
/// process whose id was reused).
const TEMP_ATTEMPTS: u32 = 16;

static TEMP_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Who may read a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Access {
    /// 0644: certificates.
    Public,
    /// 0600: private keys.
    Owner,
}

impl Access {
    fn mode(self) -> u32 {
        match self {
            Access::Public => 0o644,
            Access::Owner => 0o600,
        }
    }
}

/// Replace `path` with `contents`, atomically for readers.
pub(super) fn write_atomic(path: &Path, contents: &str, access: Access) -> Result<(), CertError> {
    refuse_symlink(path)?;
    let (tmp, mut file) = create_temp(path, access)?;
    let written = file
        .write_all(contents.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|source| io(&tmp, source))
        .and_then(|()| fs::rename(&tmp, path).map_err(|source| io(path, source)));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

fn refuse_symlink(path: &Path) -> Result<(), CertError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(CertError::Symlink {
            path: path.to_owned(),
        }),
        Ok(_) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(io(path, source)),
    }
}

/// A new file next to `path`, named `.<file>.<pid>-<n>.tmp`.
fn create_temp(path: &Path, access: Access) -> Result<(PathBuf, fs::File), CertError> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last = None;
    for _ in 0..TEMP_ATTEMPTS {
        let n = TEMP_SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(".{file_name}.{}-{n}.tmp", std::process::id()));
        match open_new(&tmp, access) {
            Ok(file) => return Ok((tmp, file)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => last = Some((tmp, err)),
            Err(source) => return Err(io(&tmp, source)),
        }
    }
    let (tmp, source) = last.unwrap_or_else(|| {
        let err = std::io::Error::other("no temporary name available");
        (path.to_owned(), err)
    });
    Err(io(&tmp, source))
}

fn open_new(path: &Path, access: Access) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(access.mode()).custom_flags(libc::O_NOFOLLOW);
        let file = options.open(path)?;
        // The umask may only have narrowed the mode; state it exactly.
        file.set_permissions(fs::Permissions::from_mode(access.mode()))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        let _ = access;
        options.open(path)
    }
}

#[cfg(all(test, unix))]
mod tests;
