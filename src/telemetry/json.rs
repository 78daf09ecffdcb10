//! JSON lines written straight into the line buffer.
//!
//! The same lines as tracing-subscriber's `.json().flatten_event(true)`
//! without spans (`timestamp`, `level`, the event's fields in order,
//! `target`), so collectors see no change. Its formatter goes through
//! serde's map serializer, a UTF-8 check on every fragment it writes and a
//! timestamp string allocated per event; a decision's log line is the
//! largest cost forcegate adds to a request after the decision itself.

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
        write_line(&mut writer, Timestamp::now(), event)
    }
}

fn write_line(out: &mut dyn Write, now: Timestamp, event: &Event<'_>) -> fmt::Result {
    let meta = event.metadata();
    // Microseconds, as tracing-subscriber's default timer writes them.
    write!(
        out,
        "{{\"timestamp\":\"{now:.6}\",\"level\":\"{}\"",
        meta.level()
    )?;
    let mut fields = Fields {
        out,
        result: Ok(()),
    };
    event.record(&mut fields);
    fields.result?;
    out.write_str(",\"target\":")?;
    json_string::write_string(out, meta.target())?;
    out.write_str("}\n")
}

/// Appends `,"name":value` for each field; the first write error sticks.
struct Fields<'a> {
    out: &'a mut dyn Write,
    result: fmt::Result,
}

impl Fields<'_> {
    fn entry(&mut self, field: &Field, value: impl FnOnce(&mut dyn Write) -> fmt::Result) {
        if self.result.is_ok() {
            self.result = self
                .out
                .write_str(",\"")
                .and_then(|()| json_string::write_escaped(self.out, field.name()))
                .and_then(|()| self.out.write_str("\":"))
                .and_then(|()| value(self.out));
        }
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.entry(field, |out| json_string::write_string(out, value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.entry(field, |out| {
            out.write_str(if value { "true" } else { "false" })
        });
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.entry(field, |out| write!(out, "{value}"));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.entry(field, |out| write!(out, "{value}"));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // serde_json's number format; JSON has no NaN or infinities: null.
        self.entry(field, |out| match serde_json::Number::from_f64(value) {
            Some(number) => write!(out, "{number}"),
            None => out.write_str("null"),
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.entry(field, |out| {
            out.write_char('"')?;
            write!(Escaping(out), "{value:?}")?;
            out.write_char('"')
        });
    }
}

/// Escapes what it is given for the inside of a JSON string.
struct Escaping<'a>(&'a mut dyn Write);

impl Write for Escaping<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        json_string::write_escaped(self.0, text)
    }
}

#[cfg(test)]
mod tests;
