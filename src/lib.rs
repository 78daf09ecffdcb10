//! forcegate: an admission webhook that gates Kubernetes force deletion.
//!
//! Data flows one way: [`admission`] decodes a review, [`intent`] classifies
//! it, [`facts`] reads the [`cluster`], [`policy`] decides, [`engine`] ties
//! them together and hands allowed force deletions to [`cleanup`].

pub mod admission;
pub mod certs;
pub mod cleanup;
pub mod cli;
pub mod cluster;
pub mod decision;
pub mod engine;
pub mod facts;
pub mod intent;
pub mod oncall;
pub mod policy;
pub mod record_name;
pub mod server;
pub mod telemetry;
pub mod testsuite;
pub mod tlsmgr;
