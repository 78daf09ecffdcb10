//! A log writer that batches: an event appends its line to a shared buffer,
//! and one thread writes the buffer out every few milliseconds.
//!
//! A queue with a writer thread per line (tracing-appender) wakes that
//! thread for every decision logged: a futex wake and a context switch per
//! admission, a tenth of the server's CPU under load. Here an event costs a
//! lock and a copy; the thread wakes on a timer, or early when the buffer
//! fills. Nothing is dropped: past [`HARD_LIMIT`] the event's own thread
//! writes the buffer out (backpressure instead of loss).

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long a line may wait in the buffer.
const INTERVAL: Duration = Duration::from_millis(20);
/// Wake the writer early past this many buffered bytes.
const SOFT_LIMIT: usize = 1 << 20;
/// Past this, the logging thread writes the buffer itself.
const HARD_LIMIT: usize = 16 << 20;

/// The [`MakeWriter`] handed to the subscriber.
#[derive(Clone)]
pub struct Batched<W: Write + Send + 'static> {
    shared: Arc<Shared<W>>,
}

/// Flushes what is buffered and stops the writer thread when dropped.
#[must_use = "dropping the guard stops the log writer"]
pub struct FlushGuard<W: Write + Send + 'static> {
    shared: Arc<Shared<W>>,
    thread: Option<JoinHandle<()>>,
}

struct Shared<W> {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// Held while a chunk is written, so chunks reach the sink in order.
    sink: Mutex<W>,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    closed: bool,
}

/// A writer over `sink` and the guard that owns its thread.
pub fn batched<W: Write + Send + 'static>(sink: W) -> io::Result<(Batched<W>, FlushGuard<W>)> {
    let shared = Arc::new(Shared {
        pending: Mutex::new(Pending::default()),
        wake: Condvar::new(),
        sink: Mutex::new(sink),
    });
    let worker = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("forcegate-log".into())
        .spawn(move || worker.run())?;
    let guard = FlushGuard {
        shared: Arc::clone(&shared),
        thread: Some(thread),
    };
    Ok((Batched { shared }, guard))
}

/// A poisoned lock only means a writer panicked mid-copy; the bytes are
/// still worth writing.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: Write + Send> Shared<W> {
    fn run(&self) {
        let mut spare = Vec::new();
        let mut pending = lock(&self.pending);
        while !pending.closed {
            pending = self
                .wake
                .wait_timeout(pending, INTERVAL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            drop(pending);
            self.flush(&mut spare);
            pending = lock(&self.pending);
        }
        drop(pending);
        self.flush(&mut spare);
    }

    /// Write out what is buffered, swapping in `spare` (kept, emptied, for
    /// the next round so the buffer's allocation is reused).
    fn flush(&self, spare: &mut Vec<u8>) {
        let mut sink = lock(&self.sink);
        std::mem::swap(&mut lock(&self.pending).bytes, spare);
        if !spare.is_empty() {
            // Nowhere to report a failing log sink; the lines are lost.
            let _ = sink.write_all(spare).and_then(|()| sink.flush());
            spare.clear();
        }
    }

    fn append(&self, line: &[u8]) {
        let mut pending = lock(&self.pending);
        let before = pending.bytes.len();
        pending.bytes.extend_from_slice(line);
        let after = pending.bytes.len();
        drop(pending);
        if after > HARD_LIMIT {
            self.flush(&mut Vec::new());
        } else if before <= SOFT_LIMIT && after > SOFT_LIMIT {
            self.wake.notify_one();
        }
    }
}

impl<W: Write + Send> Drop for FlushGuard<W> {
    fn drop(&mut self) {
        lock(&self.shared.pending).closed = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One event's writer: tracing-subscriber formats a line, then writes it
/// here whole.
pub struct Line<'a, W: Write + Send + 'static> {
    shared: &'a Shared<W>,
}

impl<'a, W: Write + Send + 'static> MakeWriter<'a> for Batched<W> {
    type Writer = Line<'a, W>;

    fn make_writer(&'a self) -> Self::Writer {
        Line {
            shared: &self.shared,
        }
    }
}

impl<W: Write + Send + 'static> Write for Line<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.shared.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
