//! The on-call commands' cores: `explain` (what a force delete would do),
//! `stuck` (everything Terminating, and why) and `records` (what force
//! deletions left behind).
//!
//! Pure cores over plain data, I/O at the edges:
//! - [`inventory`]: raw objects from snapshot files (or, via [`api`], from
//!   the API server), with what could not be read;
//! - [`evidence`]: the typed facts `stuck` diagnoses from;
//! - [`explain`], [`stuck`], [`records`]: the cores, pure;
//! - [`render`]: tables and reports for humans;
//! - [`api`]: the kube-rs edge (kubeconfig, one-shot lists, discovery).
//!
//! Everything here only reads: nothing deletes or patches.

pub mod api;
pub mod controllers;
pub mod evidence;
pub mod explain;
pub mod inventory;
pub mod records;
pub mod render;
pub mod resource;
pub mod stuck;

/// Why an on-call command could not answer. Both map to exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum OncallError {
    /// Bad arguments or input files; the text says which.
    #[error("{0}")]
    Input(String),
    /// The cluster could not be reached or refused a read.
    #[error("{0}")]
    Cluster(String),
}

/// Seconds from `then` to `now`; negative when `then` is later.
pub fn seconds_between(
    then: k8s_openapi::jiff::Timestamp,
    now: k8s_openapi::jiff::Timestamp,
) -> i64 {
    now.as_second() - then.as_second()
}
