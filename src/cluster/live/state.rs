//! Per-kind sync state: has the first list completed, when did the API
//! server last show this watch is alive, what went wrong.
//!
//! Staleness is judged on *contact*, not on changes: a watch event, a
//! bookmark (sent about once a minute), a completed list or a successfully
//! (re)started watch all prove the cache still follows the API server. A
//! quiet kind is therefore not stale; a kind whose watch keeps failing is.

use std::time::{Duration, Instant};

use crate::cluster::kind::Kind;
use crate::cluster::{KindStatus, Unknown};

#[derive(Clone, Debug)]
pub struct KindState {
    pub kind: Kind,
    /// False when this kind is deliberately not watched (see `LiveOptions`).
    pub watched: bool,
    /// The first full list has been applied.
    pub synced: bool,
    pub last_contact: Option<Instant>,
    pub errors: u64,
    pub last_error: Option<String>,
}

impl KindState {
    pub fn new(kind: Kind, watched: bool) -> Self {
        Self {
            kind,
            watched,
            synced: false,
            last_contact: None,
            errors: 0,
            last_error: None,
        }
    }

    pub fn listed(&mut self, at: Instant) {
        self.synced = true;
        self.contact(at);
    }

    pub fn contact(&mut self, at: Instant) {
        self.last_contact = Some(at);
        self.last_error = None;
    }

    pub fn failed(&mut self, error: String) {
        self.errors += 1;
        self.last_error = Some(error);
    }

    fn since_contact(&self, now: Instant) -> Option<Duration> {
        self.last_contact.map(|t| now.saturating_duration_since(t))
    }

    pub fn stale(&self, now: Instant, stale_after: Duration) -> bool {
        self.watched && self.synced && self.since_contact(now).is_some_and(|d| d > stale_after)
    }

    /// `Ok` when lookups of this kind can be trusted at `now`.
    pub fn available(&self, now: Instant, stale_after: Duration) -> Result<(), Unknown> {
        if !self.watched {
            return Ok(());
        }
        let unknown = |reason: String| Unknown {
            kind: self.kind.name().to_owned(),
            reason,
        };
        if !self.synced {
            return Err(unknown(match &self.last_error {
                Some(err) => format!("watch not synced yet: {err}"),
                None => "watch not synced yet".to_owned(),
            }));
        }
        if self.stale(now, stale_after) {
            let silent = self.since_contact(now).unwrap_or_default().as_secs();
            let mut reason = format!(
                "stale: no word from the API server for {silent}s (limit {}s)",
                stale_after.as_secs()
            );
            if let Some(err) = &self.last_error {
                reason.push_str(&format!("; last error: {err}"));
            }
            return Err(unknown(reason));
        }
        Ok(())
    }

    pub fn status(&self, now: Instant, stale_after: Duration, objects: usize) -> KindStatus {
        if !self.watched {
            return KindStatus {
                kind: self.kind.name().to_owned(),
                synced: true,
                objects: 0,
                seconds_since_event: None,
                stale: false,
                last_error: Some("not watched (disabled)".to_owned()),
                watch_errors: 0,
            };
        }
        KindStatus {
            kind: self.kind.name().to_owned(),
            synced: self.synced,
            objects,
            seconds_since_event: self.since_contact(now).map(|d| d.as_secs_f64()),
            stale: self.stale(now, stale_after),
            last_error: self.last_error.clone(),
            watch_errors: self.errors,
        }
    }
}

#[cfg(test)]
mod tests;
