use super::*;

const POLICY: &str = "\
apiVersion: forcegate.dev/v1alpha1
kind: ForceDeletionPolicy
metadata:
  name: NAME
spec:
  match:
    intents: [ForceDelete]
  action: Record
  message: recorded
";

async fn wait_for(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

#[tokio::test]
async fn reloads_and_keeps_last_good_set_on_broken_edit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a.yaml");
    std::fs::write(&file, POLICY.replace("NAME", "first")).expect("write");
    let initial = PolicySet::load_dir(dir.path()).expect("initial load");
    let target = Arc::new(ArcSwap::from_pointee(initial));
    let metrics = PolicyMetrics::default();
    let _handle = spawn_with(
        dir.path().to_path_buf(),
        target.clone(),
        metrics.clone(),
        Duration::from_millis(50),
    )
    .expect("watch");

    std::fs::write(&file, POLICY.replace("NAME", "second")).expect("write");
    assert!(
        wait_for(|| target.load().names() == vec!["second"]).await,
        "good edit was not picked up"
    );
    assert!(wait_for(|| metrics.reload_counts().0 >= 1).await);

    // A broken edit: the previous set stays in force and the failure is counted.
    std::fs::write(
        &file,
        POLICY.replace("NAME", "third").replace("Record", "Rekord"),
    )
    .expect("write");
    assert!(
        wait_for(|| metrics.reload_counts().1 >= 1).await,
        "failure not counted"
    );
    assert_eq!(target.load().names(), vec!["second"]);
    let err = PolicySet::load_dir(dir.path()).expect_err("broken");
    assert!(
        err.to_string()
            .contains("a.yaml:8:11: unknown variant `Rekord`"),
        "{err}"
    );

    // Fixing it brings the new set in.
    std::fs::write(&file, POLICY.replace("NAME", "fourth")).expect("write");
    assert!(wait_for(|| target.load().names() == vec!["fourth"]).await);
}

#[test]
fn reload_reports_and_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = ArcSwap::from_pointee(PolicySet::default());
    let metrics = PolicyMetrics::default();
    assert!(matches!(
        reload(dir.path(), &target, &metrics),
        Err(PolicyError::Empty { .. })
    ));
    std::fs::write(dir.path().join("p.yaml"), POLICY.replace("NAME", "p")).expect("write");
    assert_eq!(reload(dir.path(), &target, &metrics).expect("loads"), 1);
    assert_eq!(metrics.reload_counts(), (1, 1));
}
