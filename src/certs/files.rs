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

use super::CertError;

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

fn io(path: &Path, source: std::io::Error) -> CertError {
    CertError::Io {
        path: path.to_owned(),
        source,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::collections::HashSet;
    use std::os::unix::fs::PermissionsExt;
    use std::sync::{Arc, Barrier};

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn keys_are_0600_and_certificates_0644_even_over_wider_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("tls.key");
        let crt = dir.path().join("tls.crt");
        // Existing files with the wrong modes: replaced, not reused.
        for path in [&key, &crt] {
            fs::write(path, "old").expect("old");
            fs::set_permissions(path, fs::Permissions::from_mode(0o666)).expect("chmod");
        }
        write_atomic(&key, "secret", Access::Owner).expect("key");
        write_atomic(&crt, "public", Access::Public).expect("crt");
        assert_eq!(mode(&key), 0o600);
        assert_eq!(mode(&crt), 0o644);
        assert_eq!(fs::read_to_string(&key).expect("key"), "secret");
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_symlink_at_the_destination_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("elsewhere");
        fs::write(&target, "victim").expect("victim");
        let key = dir.path().join("tls.key");
        std::os::unix::fs::symlink(&target, &key).expect("plant link");
        let err = write_atomic(&key, "secret", Access::Owner).expect_err("refused");
        assert!(matches!(&err, CertError::Symlink { path } if path == &key));
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read_to_string(&target).expect("victim"), "victim");
        assert!(
            fs::symlink_metadata(&key)
                .expect("link")
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn a_symlink_planted_at_a_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("elsewhere");
        fs::write(&target, "victim").expect("victim");
        let key = dir.path().join("tls.key");
        // Plant links at the next temporary names this process will try.
        let next = TEMP_SEQUENCE.load(Ordering::Relaxed);
        for n in next..next + 4 {
            let name = format!(".tls.key.{}-{n}.tmp", std::process::id());
            std::os::unix::fs::symlink(&target, dir.path().join(name)).expect("plant");
        }
        write_atomic(&key, "secret", Access::Owner).expect("written beside the links");
        assert_eq!(fs::read_to_string(&target).expect("victim"), "victim");
        assert_eq!(fs::read_to_string(&key).expect("key"), "secret");
        assert_eq!(mode(&key), 0o600);
    }

    #[test]
    fn concurrent_writers_never_share_a_temporary_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let names = Arc::new(std::sync::Mutex::new(HashSet::new()));
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = dir.path().join("tls.crt");
                let (names, barrier) = (names.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let (tmp, _file) = create_temp(&path, Access::Public).expect("temp");
                    assert!(names.lock().expect("lock").insert(tmp.clone()), "{tmp:?}");
                    write_atomic(&path, &format!("writer {i}"), Access::Public).expect("write");
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("writer");
        }
        let text = fs::read_to_string(dir.path().join("tls.crt")).expect("crt");
        assert!(text.starts_with("writer "), "{text}");
    }
}
