//! Shared harness for the server integration tests: certificates laid out
//! like a mounted Secret, an engine, the real server on 127.0.0.1:0, and
//! real TLS clients (HTTP/1.1 and h2).

#![allow(dead_code)]

mod client;
mod view;

pub use client::*;
pub use view::*;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use forcegate::certs::{self, Authority, Leaf};
use forcegate::cluster::ClusterView;
use forcegate::engine::{Engine, Settings};
use forcegate::policy::PolicySet;
use forcegate::server::{Config, RunningServer, Server};
use tempfile::TempDir;

pub const SERVICE: &str = "forcegate";
pub const NAMESPACE: &str = "forcegate-system";

/// Install the process-wide crypto provider (kube and the clients need one).
pub fn init() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// A certificate directory laid out as the kubelet mounts a Secret:
/// `tls.crt -> ..data/tls.crt`, `..data -> ..<timestamp>/`.
pub struct SecretDir {
    pub dir: TempDir,
    generation: usize,
}

impl SecretDir {
    pub fn new(leaf: &Leaf) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut secret = Self { dir, generation: 0 };
        let data = secret.write_generation(leaf);
        std::os::unix::fs::symlink(&data, secret.path().join("..data")).expect("..data");
        for file in [certs::CERT_FILE, certs::KEY_FILE] {
            std::os::unix::fs::symlink(format!("..data/{file}"), secret.path().join(file))
                .expect("file symlink");
        }
        secret
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write_generation(&mut self, leaf: &Leaf) -> String {
        self.generation += 1;
        let name = format!("..2025_12_01_09_00_00.{:09}", self.generation);
        let path = self.path().join(&name);
        std::fs::create_dir(&path).expect("generation dir");
        std::fs::write(path.join(certs::CERT_FILE), &leaf.cert_pem).expect("tls.crt");
        std::fs::write(path.join(certs::KEY_FILE), &leaf.key_pem).expect("tls.key");
        name
    }

    /// What the kubelet does on a Secret update: new directory, then an
    /// atomic rename of a fresh symlink over `..data`, then cleanup.
    pub fn rotate(&mut self, leaf: &Leaf) {
        let old = std::fs::read_link(self.path().join("..data")).expect("..data target");
        let data = self.write_generation(leaf);
        let tmp = self.path().join("..data_tmp");
        std::os::unix::fs::symlink(&data, &tmp).expect("..data_tmp");
        std::fs::rename(&tmp, self.path().join("..data")).expect("swap ..data");
        std::fs::remove_dir_all(self.path().join(old)).expect("remove old generation");
    }
}

pub fn manifest_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(manifest_path(&format!(
        "tests/fixtures/reviews/{name}.json"
    )))
    .expect("fixture")
}

pub fn engine_with(cluster: Arc<dyn ClusterView>, policies: PolicySet) -> Arc<Engine> {
    engine_recording(cluster, policies, Arc::new(CountingRecorder::default()))
}

pub fn engine_recording(
    cluster: Arc<dyn ClusterView>,
    policies: PolicySet,
    recorder: Arc<CountingRecorder>,
) -> Arc<Engine> {
    Arc::new(Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        cluster,
        recorder,
        Settings::default(),
    ))
}

/// The shipped policies and the example snapshot (what the README demo uses).
pub fn example_cluster() -> (Arc<dyn ClusterView>, PolicySet) {
    let policies = PolicySet::load_dir(&manifest_path("policies")).expect("shipped policies load");
    let snapshot = forcegate::cluster::SnapshotCluster::load(&[manifest_path("examples/cluster")])
        .expect("example snapshot loads");
    (Arc::new(snapshot), policies)
}

pub fn example_review(name: &str) -> Vec<u8> {
    std::fs::read(manifest_path(&format!("examples/reviews/{name}.json"))).expect("example review")
}

/// An engine for paths that never reach facts or policies.
pub fn static_engine(synced: bool) -> Arc<Engine> {
    engine_with(Arc::new(StaticView { synced }), PolicySet::default())
}

/// A running server with its CA and certificate directory.
pub struct Harness {
    pub server: RunningServer,
    pub authority: Authority,
    pub secret: SecretDir,
}

impl Harness {
    pub async fn start(engine: Arc<Engine>, edit: impl FnOnce(&mut Config)) -> Self {
        init();
        let authority = Authority::generate(SERVICE, NAMESPACE, 2).expect("CA");
        let leaf = authority.issue(SERVICE, NAMESPACE, 2).expect("leaf");
        let secret = SecretDir::new(&leaf);
        let mut config = Config::new("127.0.0.1:0".parse().expect("addr"), secret.path());
        config.metrics_listen = Some("127.0.0.1:0".parse().expect("addr"));
        config.reload_debounce = std::time::Duration::from_millis(50);
        edit(&mut config);
        let server = Server::new(config, engine)
            .bind()
            .await
            .expect("server binds");
        Self {
            server,
            authority,
            secret,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!(
            "https://127.0.0.1:{}{path}",
            self.server.local_addr().port()
        )
    }

    pub fn metrics_url(&self, path: &str) -> String {
        let addr = self.server.metrics_addr().expect("metrics listener");
        format!("http://{addr}{path}")
    }

    pub fn client(&self, h2: bool) -> HttpsClient {
        https_client(&self.authority.cert_pem(), h2)
    }
}
