//! Request bodies: reading them within the limit, and bounding the memory
//! they and their decoded form hold at once.
//!
//! The engine decodes a review's objects into `serde_json::Value` trees, so
//! memory follows the number of JSON items more than the bytes: a 4 MiB
//! body of `0,0,0,...` (2 M items) decodes to about 200 MiB, a 640 KiB one
//! (320 k items) to 60 MiB at its peak (measured as the process's VmHWM;
//! arrays grow by doubling), a string-heavy one to little more than its
//! size. The budget is therefore counted in *estimated decoded bytes*: the
//! body plus [`BYTES_PER_ITEM`] per item. A body up to [`SCAN_ABOVE`] reserves the
//! most it could cost without being looked at; a larger one (or one of
//! unknown length) reserves the whole budget while it is read and counted,
//! then gives back all but its estimate, or is refused when even the whole
//! budget could not hold it. Every request takes its share in one acquire,
//! so no request waits while holding part of the budget.

use std::pin::Pin;

use axum::body::{Body, HttpBody};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::admission::BadReview;

/// Decoded bytes per JSON item (value, key or separator) at the peak,
/// measured on the worst shapes (arrays of small numbers, of empty
/// objects: 100 to 190), rounded up.
pub(crate) const BYTES_PER_ITEM: usize = 200;
/// At most this many items per body byte (`[[],[],...]`: two in three).
const ITEMS_PER_BYTE_AT_MOST: f64 = 2.0 / 3.0;
/// Bodies above this are counted after reading rather than assumed worst.
pub(crate) const SCAN_ABOVE: usize = 64 * 1024;

/// Estimated decoded bytes in flight, as KiB permits.
pub(crate) struct BodyBudget {
    kib: Semaphore,
    total_kib: usize,
}

/// A request's share of the budget.
pub(crate) struct Reserved<'a> {
    permit: Option<SemaphorePermit<'a>>,
    scan: bool,
}

/// The body would decode to more than the whole budget.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooComplex {
    pub estimate: usize,
    pub budget: usize,
}

impl BodyBudget {
    pub(crate) fn new(bytes: usize) -> Self {
        let total_kib = bytes.div_ceil(1024).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            kib: Semaphore::new(total_kib),
            total_kib,
        }
    }

    /// Wait for room for a body of `declared` bytes (`None`: unknown).
    pub(crate) async fn reserve(&self, declared: Option<usize>) -> Reserved<'_> {
        let (kib, scan) = match declared {
            Some(len) if len <= SCAN_ABOVE => (kib(worst_case(len)), false),
            _ => (self.total_kib, true),
        };
        let kib = u32::try_from(kib.min(self.total_kib)).unwrap_or(u32::MAX);
        Reserved {
            // Closed only if the semaphore is closed, which we never do.
            permit: self.kib.acquire_many(kib).await.ok(),
            scan,
        }
    }

    /// Now that the body is read: keep only its estimate, or refuse it.
    pub(crate) fn settle(
        &self,
        reserved: &mut Reserved<'_>,
        body: &[u8],
    ) -> Result<(), TooComplex> {
        if !reserved.scan {
            return Ok(());
        }
        let estimate = estimate(body);
        let budget = self.total_kib * 1024;
        if estimate > budget {
            return Err(TooComplex { estimate, budget });
        }
        if let Some(permit) = reserved.permit.as_mut() {
            let excess = permit.num_permits().saturating_sub(kib(estimate));
            drop(permit.split(excess));
        }
        Ok(())
    }
}

fn kib(bytes: usize) -> usize {
    bytes.div_ceil(1024).max(1)
}

/// The most a body of `len` bytes can decode to.
fn worst_case(len: usize) -> usize {
    let items = (len as f64 * ITEMS_PER_BYTE_AT_MOST).ceil() as usize;
    len.saturating_add(items.saturating_mul(BYTES_PER_ITEM))
}

/// The body plus [`BYTES_PER_ITEM`] per item: `[`, `{`, `,` and `:`
/// outside strings (each starts a value or a member).
pub(crate) fn estimate(body: &[u8]) -> usize {
    let mut items = 0usize;
    let mut bytes = body.iter();
    while let Some(&byte) = bytes.next() {
        match byte {
            b'[' | b'{' | b',' | b':' => items += 1,
            b'"' => {
                while let Some(&inner) = bytes.next() {
                    match inner {
                        b'\\' => {
                            bytes.next();
                        }
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    body.len()
        .saturating_add(items.saturating_mul(BYTES_PER_ITEM))
}

/// Read at most `limit` bytes (room for `expected` made at once); bodies
/// are cut off as soon as they pass the limit rather than buffered whole.
pub(crate) async fn read(
    body: &mut Body,
    expected: usize,
    limit: usize,
) -> Result<Vec<u8>, BadReview> {
    let mut bytes = Vec::with_capacity(expected.min(limit));
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await {
        let frame = frame.map_err(|err| BadReview::BodyRead(err.to_string()))?;
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if bytes.len() + chunk.len() > limit {
            return Err(BadReview::TooLarge { limit });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
