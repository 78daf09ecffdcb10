//! What forcegate's benchmarks share: deterministic synthetic clusters,
//! AdmissionReview bodies aimed at their objects, and the engine they are
//! decided by. Not part of the product; the load run (`bench/load.py`), its
//! servers and the criterion benches build on it.

pub mod reviews;
pub mod synthetic;

use std::path::Path;
use std::sync::Arc;

use anyhow::ensure;
use arc_swap::ArcSwap;
use forcegate::admission::{self, Request};
use forcegate::cleanup::NoopRecorder;
use forcegate::cluster::ClusterView;
use forcegate::engine::{Engine, Settings};
use forcegate::intent;
use forcegate::policy::PolicySet;

use self::reviews::Scenario;

/// The repository root, where `policies/` and `examples/` are.
pub fn repo_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The shipped policies, as `serve` loads them by default.
pub fn shipped_policies() -> anyhow::Result<PolicySet> {
    let dir = repo_root().join("policies");
    PolicySet::load_dir(&dir).map_err(|err| anyhow::anyhow!("{}: {err:?}", dir.display()))
}

/// An engine over `cluster` with default settings that records nowhere:
/// the decision `serve` makes, without the journal's I/O.
pub fn engine(cluster: Arc<dyn ClusterView>, policies: PolicySet) -> Engine {
    Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        cluster,
        Arc::new(NoopRecorder),
        Settings::default(),
    )
}

/// `body` encoded and decoded, after checking that `engine` decides it as
/// its scenario says (no unknown facts, allowed or denied, the policies that
/// must fire did): a benchmark of the wrong path would measure nothing.
pub fn decode_checked(
    engine: &Engine,
    scenario: Scenario,
    body: &serde_json::Value,
) -> anyhow::Result<(Vec<u8>, Request)> {
    let bytes = serde_json::to_vec(body)?;
    let request = admission::decode(&bytes)?;
    let (facts, decision) = engine.decide(&intent::classify(&request), &request);
    let what = format!("{} {}", scenario.name(), request.name);
    ensure!(
        facts.unknown.is_empty(),
        "{what}: unknown facts {:?}",
        facts.unknown
    );
    ensure!(
        decision.allowed == scenario.expect_allowed(),
        "{what}: expected allowed={}, got {:?}",
        scenario.expect_allowed(),
        decision.message
    );
    for policy in scenario.must_fire() {
        ensure!(
            decision.outcomes.iter().any(|o| *o.policy == **policy),
            "{what}: {policy} did not fire: {}",
            decision.message
        );
    }
    Ok((bytes, request))
}
