//! Process-wide logging: human-readable for terminals, JSON for collectors.
//!
//! Logs go to stderr so commands that print results on stdout (`certs`
//! prints the caBundle, `review` prints responses) stay pipeable.
//!
//! Lines are buffered and written by a background thread (see
//! [`batched`]): written from the request path, a decision log line cost a
//! `write(2)` per admission; behind a queue, a thread wake-up per admission.
//! No line is dropped, and the returned guard flushes on exit. JSON lines
//! are written by [`json::JsonLines`], in tracing-subscriber's JSON shape.

use std::io::{IsTerminal, Stderr};

use tracing_subscriber::EnvFilter;

use crate::cli::LogFormat;

mod batched;
#[cfg(test)]
mod captured;
mod json;

pub use json::JsonLines;

pub use batched::FlushGuard;

/// Default filter when `RUST_LOG` is unset: our own info lines, only
/// warnings from dependencies (kube, hyper, rustls are chatty at info).
const DEFAULT_FILTER: &str = "warn,forcegate=info";

/// Install the global subscriber; keep the guard until exit (dropping it
/// flushes what is buffered). Fails only if the writer thread cannot
/// start. Calling it twice is harmless (tests and embedding programs may
/// have installed their own).
#[must_use = "dropping the guard stops the log writer"]
pub fn init(format: LogFormat) -> std::io::Result<FlushGuard<Stderr>> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let (writer, guard) = batched::batched(std::io::stderr())?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    let installed = match format {
        // Colors only for a terminal; escape codes garble collected logs.
        LogFormat::Human => builder
            .with_target(false)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.event_format(json::JsonLines).try_init(),
    };
    if installed.is_err() {
        tracing::debug!("a tracing subscriber was already installed");
    }
    Ok(guard)
}
