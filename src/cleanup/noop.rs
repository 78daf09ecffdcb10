//! Recorder for `review` and `test`: decisions without side effects.

use futures::future::BoxFuture;

use super::crd::ForceDeletionSpec;
use super::{RecordError, Recorder, record_name_for};

/// Writes nothing and returns the name the live recorder would use, so
/// `review` prints the same response bytes as the server.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopRecorder;

impl Recorder for NoopRecorder {
    fn record(&self, spec: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>> {
        Box::pin(std::future::ready(Ok(record_name_for(&spec))))
    }
}
