#![cfg(feature = "e2e")]
//! End-to-end: forcegate behind a real kube-apiserver, driven with real kubectl.
//!
//! `cargo test --features e2e --test e2e` (CI adds `-- --test-threads=1`;
//! parallel threads also work). The first test to run builds the test bed
//! (`tests/cluster/build.sh`: kube-apiserver, etcd and kubectl v1.36, cached
//! under `target/testcluster/`), starts one cluster, installs `manifests/`
//! through the overlay in `e2e/overlay.rs` (webhooks pointing at
//! `https://127.0.0.1:<port>` with the caBundle from `forcegate certs`) and
//! runs one `forcegate serve --cluster kube` on the host **as the
//! ServiceAccount of the manifests**, so their RBAC is exercised too, with
//! client-certificate authentication on (the API server presents a client
//! certificate through its admission kubeconfig). If any of that fails,
//! every test fails with the reason: nothing is skipped.
//!
//! Each test builds its own namespace, nodes and objects (no kubelet,
//! scheduler or controllers run: statuses are patched as admin), and waits
//! with deadlines only. The outage test stops forcegate while holding the
//! harness exclusively and restarts it afterwards.
//!
//! Teardown: the cluster launcher and the forcegate wrapper both stop when
//! this process exits, however it exits (their stdin pipes close).

#[path = "chart_support/mod.rs"]
mod chart_support;
#[path = "doc_capture/mod.rs"]
mod doc_capture;
#[path = "e2e/fixtures.rs"]
mod fixtures;
#[path = "e2e/harness.rs"]
mod harness;
#[path = "e2e/kubectl.rs"]
mod kubectl;
#[path = "e2e/overlay.rs"]
mod overlay;
#[path = "e2e/plugin.rs"]
mod plugin;
#[path = "e2e/process.rs"]
mod process;
#[path = "e2e/release.rs"]
mod release;
#[path = "e2e/setup.rs"]
mod setup;
#[path = "e2e/storage.rs"]
mod storage;
#[path = "e2e/widgets.rs"]
mod widgets;

#[path = "e2e/bypass.rs"]
mod bypass;
#[path = "e2e/certs.rs"]
mod certs;
#[path = "e2e/chart.rs"]
mod chart;
#[path = "e2e/client_auth.rs"]
mod client_auth;
#[path = "e2e/eviction.rs"]
mod eviction;
#[path = "e2e/finalizers.rs"]
mod finalizers;
#[path = "e2e/force_delete.rs"]
mod force_delete;
#[path = "e2e/manifests.rs"]
mod manifests;
#[path = "e2e/monitoring.rs"]
mod monitoring;
#[path = "monitoring_support/mod.rs"]
mod monitoring_support;
#[path = "e2e/oncall.rs"]
mod oncall;
#[path = "e2e/outage.rs"]
mod outage;
#[path = "e2e/policies.rs"]
mod policies;
#[path = "e2e/rbac.rs"]
mod rbac;
#[path = "e2e/replicas.rs"]
mod replicas;
#[path = "e2e/webhook.rs"]
mod webhook;
