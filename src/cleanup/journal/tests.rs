use std::io::Write as _;

use serde_json::json;

use super::*;

fn spec(uid: &str) -> ForceDeletionSpec {
    serde_json::from_value(json!({
        "subject": "Pod db/web-0",
        "object": {"version": "v1", "kind": "Pod", "resource": "pods", "namespace": "db", "name": "web-0", "uid": uid},
        "action": {"type": "ForceDelete", "objectDeleting": true},
        "node": "worker-1",
        "podIPs": ["10.244.1.17"],
        "requester": {"username": "alice@example.com"},
        "requestedAt": "2026-03-02T10:00:00Z"
    }))
    .expect("spec")
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn records_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state/forcegate.journal");
    let journal = JournalRecorder::open(&path).expect("open");
    let (a, created_a) = journal.record_blocking(spec("uid-a")).expect("a");
    let (b, _) = journal.record_blocking(spec("uid-b")).expect("b");
    assert!(created_a);
    assert_eq!((a.as_str(), b.as_str()), ("fd-uid-a", "fd-uid-b"));
    drop(journal);

    let reopened = JournalRecorder::open(&path).expect("reopen");
    assert_eq!(
        reopened.recovery(),
        &Recovery {
            records: 2,
            torn: None
        }
    );
    let record = reopened.get("fd-uid-a").expect("record a");
    assert_eq!(record.spec, spec("uid-a"));
    let json = serde_json::to_value(&record).expect("json");
    assert_eq!(
        (json["apiVersion"].as_str(), json["kind"].as_str()),
        (Some("forcegate.dev/v1alpha1"), Some("ForceDeletion"))
    );
    assert!(record.metadata.creation_timestamp.is_some());
}

#[test]
fn same_uid_twice_writes_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("j");
    let journal = JournalRecorder::open(&path).expect("open");
    let first = journal.record_blocking(spec("uid-a")).expect("first");
    let mut changed = spec("uid-a");
    changed.node = Some("worker-9".into());
    let second = journal.record_blocking(changed).expect("second");
    assert_eq!(first, ("fd-uid-a".to_string(), true));
    assert_eq!(second, ("fd-uid-a".to_string(), false));
    assert_eq!(lines(&path).len(), 1);
    // The first write wins; nothing is overwritten.
    assert_eq!(
        journal.get("fd-uid-a").and_then(|r| r.spec.node).as_deref(),
        Some("worker-1")
    );
}

thread_local! {
    /// Log output of the code under test on this thread, while capturing.
    static CAPTURED: std::cell::RefCell<Option<Vec<u8>>> = const { std::cell::RefCell::new(None) };
}

/// Writes into this thread's capture, or nowhere.
struct ThreadCapture;

impl std::io::Write for ThreadCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        CAPTURED.with_borrow_mut(|captured| {
            if let Some(captured) = captured {
                captured.extend_from_slice(buf);
            }
        });
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Run `f` and return what it logged on this thread. A process-wide
/// subscriber (installed once) writes to the capturing thread: a scoped one
/// raced with tests on other threads that cache a callsite's interest.
fn capture_logs<R>(f: impl FnOnce() -> R) -> (R, String) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_writer(|| ThreadCapture)
            .with_ansi(false)
            .finish();
        // Should something else be global already, captures stay empty and
        // the assertions on them fail, saying so.
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
    CAPTURED.with_borrow_mut(|captured| *captured = Some(Vec::new()));
    let result = f();
    let logged = CAPTURED.with_borrow_mut(Option::take).unwrap_or_default();
    (result, String::from_utf8_lossy(&logged).into_owned())
}

#[test]
fn torn_last_line_is_skipped_with_a_warning_and_truncated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("j");
    let journal = JournalRecorder::open(&path).expect("open");
    journal.record_blocking(spec("uid-a")).expect("a");
    journal.record_blocking(spec("uid-b")).expect("b");
    drop(journal);
    let good_len = std::fs::metadata(&path).expect("meta").len();
    let full = serde_json::to_string(&ForceDeletion::new("fd-uid-c", spec("uid-c"))).expect("json");
    let mut file = OpenOptions::new().append(true).open(&path).expect("append");
    file.write_all(&full.as_bytes()[..full.len() / 2])
        .expect("torn write");
    drop(file);

    let (reopened, logged) = capture_logs(|| JournalRecorder::open(&path));
    let reopened = reopened.expect("reopen");
    let recovery = reopened.recovery().clone();
    assert_eq!(recovery.records, 2);
    let torn = recovery.torn.expect("torn tail reported");
    assert_eq!(
        (torn.line, torn.offset, torn.bytes),
        (3, good_len, (full.len() / 2) as u64)
    );
    assert!(
        logged.contains("WARN") && logged.contains("torn last line"),
        "{logged}"
    );
    assert_eq!(
        std::fs::metadata(&path).expect("meta").len(),
        good_len,
        "torn bytes truncated"
    );

    // The next append starts on a clean line and replays fully.
    reopened.record_blocking(spec("uid-c")).expect("c");
    drop(reopened);
    let again = JournalRecorder::open(&path).expect("third open");
    assert_eq!(
        again.recovery(),
        &Recovery {
            records: 3,
            torn: None
        }
    );
}

#[test]
fn zero_filled_tail_is_torn_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("j");
    JournalRecorder::open(&path)
        .expect("open")
        .record_blocking(spec("uid-a"))
        .expect("a");
    let mut file = OpenOptions::new().append(true).open(&path).expect("append");
    file.write_all(&[0; 512]).expect("zeros");
    drop(file);
    let reopened = JournalRecorder::open(&path).expect("reopen");
    assert_eq!(reopened.recovery().records, 1);
    assert!(reopened.recovery().torn.is_some());
}

#[test]
fn complete_last_record_without_newline_is_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("j");
    let line = serde_json::to_string(&ForceDeletion::new("fd-uid-a", spec("uid-a"))).expect("json");
    std::fs::write(&path, &line).expect("write");
    let journal = JournalRecorder::open(&path).expect("open");
    assert_eq!(
        journal.recovery(),
        &Recovery {
            records: 1,
            torn: None
        }
    );
    journal.record_blocking(spec("uid-b")).expect("b");
    drop(journal);
    assert_eq!(lines(&path).len(), 2);
    assert_eq!(
        JournalRecorder::open(&path)
            .expect("reopen")
            .records()
            .len(),
        2
    );
}

#[test]
fn corrupt_line_before_the_end_refuses_to_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("j");
    let journal = JournalRecorder::open(&path).expect("open");
    journal.record_blocking(spec("uid-a")).expect("a");
    drop(journal);
    let mut file = OpenOptions::new().append(true).open(&path).expect("append");
    file.write_all(b"{\"kind\": garbage\n").expect("garbage");
    drop(file);
    let journal = JournalRecorder::open(&path).expect("open");
    journal.record_blocking(spec("uid-b")).expect("b");
    drop(journal);
    // The garbage line was torn (last) at that open; now forge one in the middle.
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.insert_str(0, "not json\n");
    std::fs::write(&path, text).expect("write");
    match JournalRecorder::open(&path) {
        Err(RecordError::Corrupt { line, .. }) => assert_eq!(line, 1),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("opened a corrupt journal"),
    }
}

#[test]
fn a_second_process_cannot_open_the_same_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("j");
    let _held = JournalRecorder::open(&path).expect("open");
    assert!(matches!(
        JournalRecorder::open(&path),
        Err(RecordError::Locked { .. })
    ));
}

#[tokio::test]
async fn recorder_trait_counts_created_and_existing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = CleanupMetrics::register(&mut registry);
    let journal = JournalRecorder::open(dir.path().join("j"))
        .expect("open")
        .with_metrics(metrics);
    let recorder: &dyn Recorder = &journal;
    assert_eq!(recorder.record(spec("uid-a")).await.expect("a"), "fd-uid-a");
    assert_eq!(
        recorder.record(spec("uid-a")).await.expect("a again"),
        "fd-uid-a"
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
    assert!(
        text.contains(r#"forcegate_cleanup_records_total{backend="journal",result="created"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"forcegate_cleanup_records_total{backend="journal",result="existing"} 1"#),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn journal_is_private_and_never_follows_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).expect("meta").permissions().mode() & 0o777;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("forcegate.journal");
    drop(JournalRecorder::open(&path).expect("create"));
    assert_eq!(mode(&path), 0o600);

    // A journal left readable by others is narrowed when opened.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    drop(JournalRecorder::open(&path).expect("reopen"));
    assert_eq!(mode(&path), 0o600);

    // A link planted at the journal's path is refused, its target untouched,
    // whether the target exists or not.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "").expect("victim");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    for target in [victim.clone(), dir.path().join("missing")] {
        let link = dir.path().join("linked.journal");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).expect("plant link");
        let err = JournalRecorder::open(&link)
            .err()
            .expect("a symlinked journal is refused");
        assert!(
            err.to_string().contains("symbolic link"),
            "unclear error: {err}"
        );
        assert!(!dir.path().join("missing").exists());
    }
    assert_eq!(std::fs::read(&victim).expect("victim"), b"");
    assert_eq!(mode(&victim), 0o644);
}
