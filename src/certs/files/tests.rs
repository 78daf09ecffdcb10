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
