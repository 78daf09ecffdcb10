//! Crash safety of the standalone journal: a writer process is SIGKILLed
//! mid-record and replay must recover every acknowledged record.
//!
//! The writer is this very test binary, re-executed with
//! `FORCEGATE_CRASH_JOURNAL` set so that only [`child_journal_writer`] runs.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use forcegate::cleanup::{ForceDeletion, ForceDeletionSpec, JournalRecorder, record_name};
use serde_json::json;

const JOURNAL_ENV: &str = "FORCEGATE_CRASH_JOURNAL";
const MODE_ENV: &str = "FORCEGATE_CRASH_MODE";
const START_ENV: &str = "FORCEGATE_CRASH_START";

/// A pod with many volumes: lines of ~200 KiB take many pages to write, so a
/// SIGKILL can land inside the write and leave a genuinely torn line.
fn spec(i: usize, volumes: usize) -> ForceDeletionSpec {
    let volumes: Vec<_> = (0..volumes)
        .map(|v| {
            json!({"claim": format!("data-{v}"), "persistentVolume": format!("pvc-{i}-{v}"),
                   "attachments": [{"name": format!("csi-{i}-{v}"), "node": "worker-1", "attached": true}]})
        })
        .collect();
    serde_json::from_value(json!({
        "subject": format!("Pod db/web-{i}"),
        "object": {"version": "v1", "kind": "Pod", "resource": "pods", "namespace": "db",
                   "name": format!("web-{i}"), "uid": uid(i)},
        "action": {"type": "ForceDelete", "objectDeleting": true},
        "node": "worker-1",
        "volumes": volumes,
        "requester": {"username": "alice@example.com"},
        "requestedAt": "2026-03-02T10:00:00Z"
    }))
    .expect("spec")
}

fn uid(i: usize) -> String {
    format!("00000000-0000-4000-8000-{i:012}")
}

/// The writer process. A no-op unless re-executed by the tests below.
#[test]
fn child_journal_writer() {
    let Some(path) = std::env::var_os(JOURNAL_ENV) else {
        return;
    };
    let start: usize = std::env::var(START_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let journal = JournalRecorder::open(&path).expect("child opens journal");
    let mut out = std::io::stdout().lock();
    match std::env::var(MODE_ENV).as_deref() {
        Ok("torn") => {
            for i in start..start + 5 {
                let (name, _) = journal.record_blocking(spec(i, 4)).expect("record");
                writeln!(out, "acked {name}").expect("stdout");
            }
            // Exactly what a kill between two write(2) calls of one line
            // leaves: the first half of a record, no newline.
            let line =
                serde_json::to_string(&ForceDeletion::new(&record_name(&uid(999)), spec(999, 4)))
                    .expect("json");
            let mut raw = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .expect("raw open");
            raw.write_all(&line.as_bytes()[..line.len() / 2])
                .expect("half line");
            raw.sync_data().expect("sync");
            writeln!(out, "torn").expect("stdout");
        }
        _ => {
            for i in start.. {
                let (name, _) = journal.record_blocking(spec(i, 1500)).expect("record");
                writeln!(out, "acked {name}").expect("stdout");
                out.flush().expect("flush");
            }
        }
    }
    out.flush().expect("flush");
    std::thread::sleep(Duration::from_secs(600));
}

fn spawn_writer(path: &Path, mode: &str, start: usize) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_journal_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(JOURNAL_ENV, path)
        .env(MODE_ENV, mode)
        .env(START_ENV, start.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn writer");
    let stdout = child.stdout.take().expect("stdout");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, received)
}

/// Wait for `count` lines (with a generous bound for a loaded CI machine).
fn wait_for(received: &mpsc::Receiver<String>, seen: &mut Vec<String>, count: usize) {
    while acked(seen).len() < count {
        match received.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => seen.push(line),
            Err(err) => panic!("writer stalled: {err}; output so far: {seen:?}"),
        }
    }
}

/// SIGKILL (Child::kill on Unix), then collect what it acknowledged.
fn kill(mut child: Child, received: mpsc::Receiver<String>, seen: &mut Vec<String>) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    seen.extend(received.iter());
}

/// The harness may print `test child_journal_writer ... ` on the same line.
fn acked(seen: &[String]) -> Vec<String> {
    seen.iter()
        .filter_map(|l| l.split_once("acked ").map(|(_, name)| name.to_string()))
        .collect()
}

#[test]
fn sigkill_mid_record_loses_no_acknowledged_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("forcegate.journal");
    let mut all_acked = Vec::new();
    let mut torn_seen = 0;
    let mut next = 0;
    for round in 0..3 {
        let (child, received) = spawn_writer(&path, "loop", next);
        let mut seen = Vec::new();
        let jitter = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos() as usize % 7)
            .unwrap_or(0);
        wait_for(&received, &mut seen, 3 + jitter);
        kill(child, received, &mut seen);
        let acked = acked(&seen);
        all_acked.extend(acked.iter().cloned());

        let journal = JournalRecorder::open(&path).expect("replay after SIGKILL");
        let recovery = journal.recovery().clone();
        for name in &all_acked {
            let record = journal
                .get(name)
                .unwrap_or_else(|| panic!("round {round}: acknowledged {name} lost"));
            assert_eq!(
                &record_name(record.spec.object.uid.as_deref().unwrap_or("")),
                name
            );
        }
        // At most the one record in flight is complete but unacknowledged.
        let written = recovery.records - next;
        assert!(
            written == acked.len() || written == acked.len() + 1,
            "round {round}: {written} records written, {} acknowledged",
            acked.len()
        );
        if recovery.torn.is_some() {
            torn_seen += 1;
        }
        next = recovery.records;
        drop(journal);
    }
    eprintln!(
        "3 SIGKILLs, {torn_seen} left a torn line, {} records recovered",
        all_acked.len()
    );
}

#[test]
fn torn_last_line_from_a_killed_writer_is_skipped_and_nothing_before_it_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("forcegate.journal");
    let (child, received) = spawn_writer(&path, "torn", 0);
    let mut seen = Vec::new();
    wait_for(&received, &mut seen, 5);
    while !seen.iter().any(|l| l.ends_with("torn")) {
        seen.push(
            received
                .recv_timeout(Duration::from_secs(120))
                .expect("torn marker"),
        );
    }
    kill(child, received, &mut seen);
    let acked = acked(&seen);
    assert_eq!(acked.len(), 5);

    let complete_len: u64 = std::fs::read(&path)
        .expect("read")
        .split_inclusive(|b| *b == b'\n')
        .filter(|l| l.ends_with(b"\n"))
        .map(|l| l.len() as u64)
        .sum();
    let journal = JournalRecorder::open(&path).expect("replay");
    let torn = journal.recovery().torn.clone().expect("torn line reported");
    assert_eq!(torn.line, 6);
    assert_eq!(torn.offset, complete_len);
    assert_eq!(journal.recovery().records, 5);
    for name in &acked {
        assert!(journal.get(name).is_some(), "{name} lost");
    }
    assert!(
        journal.get(&record_name(&uid(999))).is_none(),
        "the torn record is not invented"
    );
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), complete_len);
}
