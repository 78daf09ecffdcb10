use super::*;
use crate::telemetry::captured::Captured;

fn line(n: usize) -> String {
    format!("line {n:06}\n")
}

#[test]
fn lines_from_many_threads_all_arrive_whole_and_in_per_thread_order() {
    let sink = Captured::default();
    let (writer, guard) = batched(sink.clone()).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let writer = writer.clone();
            scope.spawn(move || {
                for n in 0..5_000 {
                    writer
                        .make_writer()
                        .write_all(line(t * 10_000 + n).as_bytes())
                        .unwrap();
                }
            });
        }
    });
    drop(guard);
    let text = sink.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20_000);
    for t in 0..4 {
        let own: Vec<usize> = lines
            .iter()
            .map(|l| l["line ".len()..].parse::<usize>().unwrap())
            .filter(|n| n / 10_000 == t)
            .collect();
        assert_eq!(own, (t * 10_000..t * 10_000 + 5_000).collect::<Vec<_>>());
    }
}

#[test]
fn a_line_is_written_within_the_interval_without_the_guard_dropping() {
    let sink = Captured::default();
    let (writer, _guard) = batched(sink.clone()).unwrap();
    writer.make_writer().write_all(b"hello\n").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while sink.0.lock().unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "never flushed");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(sink.0.lock().unwrap().as_slice(), b"hello\n");
}

#[test]
fn past_the_hard_limit_the_logging_thread_writes_itself() {
    let sink = Captured::default();
    let (writer, _guard) = batched(sink.clone()).unwrap();
    let big = vec![b'x'; HARD_LIMIT + 1];
    writer.make_writer().write_all(&big).unwrap();
    // Written synchronously: no waiting for the timer.
    assert_eq!(sink.0.lock().unwrap().len(), HARD_LIMIT + 1);
}
