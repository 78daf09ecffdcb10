//! `forcegate serve --manage-certs` flag handling: both spellings the
//! manifests use parse, and without a live cluster it refuses to start with
//! a usage error (exit 2) that says why, before touching any certificate.

use std::process::Command;

fn serve(args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .arg("serve")
        .args(args)
        .arg(format!("--tls-dir={}", dir.path().join("certs").display()))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs forcegate");
    let created = dir.path().join("certs").exists();
    assert!(!created, "no development certificate may be written");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn manage_certs_needs_the_live_cluster() {
    for flag in ["--manage-certs", "--manage-certs=true"] {
        let (code, stderr) = serve(&[flag, "--cluster=examples/cluster"]);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains("--manage-certs needs --cluster kube"),
            "{stderr}"
        );
    }
    // `=false` (deploy/cert-manager/) parses: what stops it here is the address.
    let (code, stderr) = serve(&["--manage-certs=false", "--listen=nonsense"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("invalid listen address"), "{stderr}");
    let (code, stderr) = serve(&["--manage-certs=maybe"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--manage-certs"), "{stderr}");
}
