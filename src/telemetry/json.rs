//! JSON lines written straight into the line buffer.
//!
//! The same lines as tracing-subscriber's `.json().flatten_event(true)`
//! without spans (`timestamp`, `level`, the event's fields in order,
//! `target`), so collectors see no change. Its formatter goes through
//! serde's map serializer, a UTF-8 check on every fragment it writes and a
//! timestamp string allocated per event; a decision's log line is the
//! largest cost forcegate adds to a request after the decision itself.
//!
//! A line is built in a `String` of this thread's and handed to the
//! subscriber's writer in one piece: every small write through the
//! writer's `dyn fmt::Write` was two virtual calls, a few hundred
//! instructions per field.

use std::cell::RefCell;
use std::fmt::{self, Write};

use k8s_openapi::jiff::Timestamp;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::json_string;

/// The event formatter for `--log-format json`.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonLines;

/// This thread's line buffer and the second its timestamps last fell in.
#[derive(Default)]
struct LineBuffer {
    line: String,
    clock: SecondCache,
}

thread_local! {
    static BUFFER: RefCell<LineBuffer> = RefCell::default();
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let now = Timestamp::now();
        BUFFER.with(|buffer| match buffer.try_borrow_mut() {
            Ok(mut buffer) => {
                let LineBuffer { line, clock } = &mut *buffer;
                line.clear();
                write_line(line, clock, now, event)?;
                writer.write_str(line)
            }
            // An event logged while formatting one (a field's Debug that
            // logs) gets a buffer of its own.
            Err(_) => {
                let mut line = String::new();
                write_line(&mut line, &mut SecondCache::default(), now, event)?;
                writer.write_str(&line)
            }
        })
    }
}

fn write_line(
    out: &mut String,
    clock: &mut SecondCache,
    now: Timestamp,
    event: &Event<'_>,
) -> fmt::Result {
    let meta = event.metadata();
    out.push_str("{\"timestamp\":\"");
    clock.write(out, now);
    out.push_str("\",\"level\":\"");
    out.push_str(meta.level().as_str());
    out.push('"');
    let mut fields = Fields {
        out,
        result: Ok(()),
    };
    event.record(&mut fields);
    fields.result?;
    out.push_str(",\"target\":");
    json_string::write_string(out, meta.target())?;
    out.push_str("}\n");
    Ok(())
}

/// RFC 3339 with microseconds (`2026-12-05T07:30:00.123456Z`), as
/// tracing-subscriber's default timer writes it. The date and time up to
/// the second are formatted once per second and reused: formatting the
/// whole timestamp was a tenth of the line.
#[derive(Default)]
struct SecondCache {
    /// The second (Unix time) `prefix` shows, when there is one.
    second: Option<i64>,
    /// `2026-12-05T07:30:00.`
    prefix: String,
}

impl SecondCache {
    fn write(&mut self, out: &mut String, now: Timestamp) {
        let (second, micros) = (now.as_second(), now.subsec_microsecond());
        // Before 1970 the fraction counts backwards: no shortcut there.
        if micros < 0 || second < 0 {
            let _ = write!(out, "{now:.6}");
            return;
        }
        if self.second != Some(second) {
            self.prefix.clear();
            let _ = write!(self.prefix, "{:.6}", now);
            let dot = self
                .prefix
                .rfind('.')
                .map_or(self.prefix.len(), |at| at + 1);
            self.prefix.truncate(dot);
            self.second = Some(second);
        }
        out.push_str(&self.prefix);
        let mut digits = [b'0'; 6];
        let mut rest = micros.unsigned_abs();
        for digit in digits.iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        // Six ASCII digits.
        out.push_str(std::str::from_utf8(&digits).unwrap_or("000000"));
        out.push('Z');
    }
}

/// Appends `,"name":value` for each field; the first error (a Debug
/// impl's) sticks.
struct Fields<'a> {
    out: &'a mut String,
    result: fmt::Result,
}

impl Fields<'_> {
    /// `,"name":` for the field about to be written.
    fn key(&mut self, field: &Field) {
        self.out.push_str(",\"");
        // Writing into a `String` cannot fail.
        let _ = json_string::write_escaped(self.out, field.name());
        self.out.push_str("\":");
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.key(field);
        let _ = json_string::write_string(self.out, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.key(field);
        self.out.push_str(if value { "true" } else { "false" });
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.key(field);
        let _ = write!(self.out, "{value}");
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.key(field);
        let _ = write!(self.out, "{value}");
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.key(field);
        push_f64(self.out, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_err() {
            return;
        }
        self.key(field);
        self.out.push('"');
        self.result = write!(Escaping(self.out), "{value:?}");
        self.out.push('"');
    }
}

/// serde_json's number format (zmij's shortest round-trip form, which its
/// `Number` writes through the formatter); JSON has no NaN or infinities:
/// null, as serde_json writes them.
fn push_f64(out: &mut String, value: f64) {
    if value.is_finite() {
        out.push_str(zmij::Buffer::new().format_finite(value));
    } else {
        out.push_str("null");
    }
}

/// Escapes what it is given for the inside of a JSON string.
struct Escaping<'a>(&'a mut String);

impl Write for Escaping<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        json_string::write_escaped(self.0, text)
    }
}

#[cfg(test)]
mod tests;
