//! The JSON log line: what tracing-subscriber's `json()` formatter writes
//! with `flatten_event(true)` and no spans, serialized into one buffer.
//!
//! The library's formatter hands serde_json an adaptor that checks UTF-8
//! and appends to the line for each token, about half of a decision
//! line's cost. This one serializes the same object with tracing-serde's
//! visitor into a `Vec` and appends it once; `tests.rs` pins its bytes to
//! the library's on the same events.

use std::fmt;

use serde::ser::{SerializeMap, Serializer as _};
use tracing::{Event, Subscriber};
use tracing_serde::{AsSerde, SerdeMapVisitor};
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::registry::LookupSpan;

/// `timestamp`, `level`, the event's fields (`message` among them), then
/// `target`.
#[derive(Default)]
pub struct JsonLine<T = SystemTime> {
    pub(crate) timer: T,
}

/// Room for a decision line without regrowing.
const LINE_CAPACITY: usize = 512;

impl<S, N, T> FormatEvent<S, N> for JsonLine<T>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    T: FormatTime,
{
    fn format_event(
        &self,
        _: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut timestamp = String::new();
        self.timer.format_time(&mut Writer::new(&mut timestamp))?;
        let mut line = Vec::with_capacity(LINE_CAPACITY);
        write_object(&mut line, &timestamp, event).map_err(|_| fmt::Error)?;
        line.push(b'\n');
        writer.write_str(std::str::from_utf8(&line).map_err(|_| fmt::Error)?)
    }
}

fn write_object(line: &mut Vec<u8>, timestamp: &str, event: &Event<'_>) -> serde_json::Result<()> {
    let meta = event.metadata();
    let mut serializer = serde_json::Serializer::new(line);
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("timestamp", timestamp)?;
    map.serialize_entry("level", &meta.level().as_serde())?;
    let mut visitor = SerdeMapVisitor::new(map);
    event.record(&mut visitor);
    let mut map = visitor.take_serializer()?;
    map.serialize_entry("target", meta.target())?;
    map.end()
}
