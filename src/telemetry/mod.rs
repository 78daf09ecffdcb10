//! Process-wide logging: human-readable for terminals, JSON for collectors.
//!
//! Logs go to stderr so commands that print results on stdout (`certs`
//! prints the caBundle, `review` prints responses) stay pipeable.
//!
//! Lines are buffered and written by a background thread (see
//! [`batched`]): no line is dropped, and the returned guard flushes on
//! exit. JSON lines are tracing-subscriber's shape, one object per event
//! with the event's fields at the top level.

use std::io::{IsTerminal, Stderr};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::SubscriberBuilder;
use tracing_subscriber::fmt::format::{DefaultFields, Format, JsonFields};

mod batched;
#[cfg(test)]
mod captured;
mod json_line;

pub use batched::FlushGuard;
use json_line::JsonLine;

/// Default filter when `RUST_LOG` is unset: our own info lines, only
/// warnings from dependencies (kube, hyper, rustls are chatty at info).
const DEFAULT_FILTER: &str = "warn,forcegate=info";

/// How log lines are written: for people, or one JSON object per line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

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
        LogFormat::Json => json_lines(builder).try_init(),
    };
    if installed.is_err() {
        tracing::debug!("a tracing subscriber was already installed");
    }
    Ok(guard)
}

/// One JSON object per line ([`JsonLine`]); spans are left out
/// (forcegate logs none that matter).
fn json_lines<F, W>(
    builder: SubscriberBuilder<DefaultFields, Format, F, W>,
) -> SubscriberBuilder<JsonFields, JsonLine, F, W>
where
    W: for<'a> MakeWriter<'a> + 'static,
{
    builder
        .fmt_fields(JsonFields::new())
        .event_format(JsonLine::default())
}

#[cfg(test)]
mod tests;
