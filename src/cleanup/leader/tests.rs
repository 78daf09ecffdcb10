use super::*;

fn lease(holder: Option<&str>) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some("forcegate-verifier".into()),
            resource_version: Some("7".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: holder.map(str::to_string),
            lease_duration_seconds: Some(15),
            ..LeaseSpec::default()
        }),
    }
}

#[test]
fn missing_lease_is_created() {
    assert_eq!(decide(None, "a", false), Step::Create);
}

#[test]
fn own_lease_is_renewed_even_if_it_looks_expired() {
    assert_eq!(decide(Some(&lease(Some("a"))), "a", true), Step::Renew);
}

#[test]
fn live_lease_of_another_replica_is_left_alone() {
    assert_eq!(
        decide(Some(&lease(Some("b"))), "a", false),
        Step::Wait { holder: "b".into() }
    );
}

#[test]
fn expired_or_released_lease_is_taken_over() {
    assert_eq!(decide(Some(&lease(Some("b"))), "a", true), Step::TakeOver);
    assert_eq!(decide(Some(&lease(None)), "a", false), Step::TakeOver);
    assert_eq!(decide(Some(&lease(Some(""))), "a", false), Step::TakeOver);
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::cleanup::fake_api::FakeApi;

const LEASE_PATH: &str =
    "/apis/coordination.k8s.io/v1/namespaces/forcegate/leases/forcegate-verifier";

fn quick(identity: &str) -> LeaderSettings {
    LeaderSettings {
        lease_duration: Duration::from_secs(1),
        renew_deadline: Duration::from_millis(500),
        retry_period: Duration::from_millis(20),
        ..LeaderSettings::new("forcegate", "forcegate-verifier", identity)
    }
}

fn holder(api: &FakeApi) -> serde_json::Value {
    api.get(LEASE_PATH).expect("lease")["spec"]["holderIdentity"].clone()
}

#[tokio::test]
async fn one_leader_at_a_time_and_takeover_after_expiry() {
    let api = FakeApi::default();
    let mut a = LeaseLock::new(api.client(), quick("a"));
    let mut b = LeaseLock::new(api.client(), quick("b"));
    assert!(a.try_acquire_or_renew().await.expect("a creates"));
    assert!(!b.try_acquire_or_renew().await.expect("b waits"));
    assert!(a.try_acquire_or_renew().await.expect("a renews"));
    assert!(!b.try_acquire_or_renew().await.expect("b sees the renewal"));
    assert_eq!(holder(&api), "a");
    // a stops renewing (crashed); b's own clock sees no change for 1 s.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(b.try_acquire_or_renew().await.expect("b takes over"));
    assert!(!a.try_acquire_or_renew().await.expect("a steps aside"));
    let lease = api.get(LEASE_PATH).expect("lease");
    assert_eq!(lease["spec"]["holderIdentity"], "b");
    assert_eq!(lease["spec"]["leaseTransitions"], 1);
}

#[tokio::test]
async fn racing_candidates_cannot_both_win() {
    let api = FakeApi::default();
    let mut a = LeaseLock::new(api.client(), quick("a"));
    let mut b = LeaseLock::new(api.client(), quick("b"));
    let mut c = LeaseLock::new(api.client(), quick("c"));
    assert!(a.try_acquire_or_renew().await.expect("a"));
    assert!(!b.try_acquire_or_renew().await.expect("b"));
    assert!(!c.try_acquire_or_renew().await.expect("c"));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (b_won, c_won) = tokio::join!(b.try_acquire_or_renew(), c.try_acquire_or_renew());
    let winners = [b_won.expect("b"), c_won.expect("c")];
    assert_eq!(winners.iter().filter(|w| **w).count(), 1, "{winners:?}");
}

#[tokio::test]
async fn released_lease_is_taken_at_once() {
    let api = FakeApi::default();
    let mut a = LeaseLock::new(api.client(), quick("a"));
    let mut b = LeaseLock::new(api.client(), quick("b"));
    assert!(a.try_acquire_or_renew().await.expect("a"));
    a.release().await.expect("release");
    assert_eq!(holder(&api), serde_json::Value::Null);
    assert!(
        b.try_acquire_or_renew()
            .await
            .expect("b takes the released lease")
    );
}

#[tokio::test]
async fn lead_runs_work_while_leading_and_releases_on_shutdown() {
    let api = FakeApi::default();
    let (stop, stopped) = oneshot::channel::<()>();
    let changes = Arc::new(Mutex::new(Vec::new()));
    let terms = Arc::new(AtomicUsize::new(0));
    let (seen, counted) = (changes.clone(), terms.clone());
    let task = tokio::spawn(lead(
        LeaseLock::new(api.client(), quick("a")),
        async move {
            let _ = stopped.await;
        },
        move |lost| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                let _ = lost.await;
            }
        },
        move |leading| seen.lock().expect("changes").push(leading),
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(holder(&api), "a");
    let _ = stop.send(());
    task.await.expect("lead ends on shutdown");
    assert_eq!(*changes.lock().expect("changes"), [true, false]);
    assert_eq!(terms.load(Ordering::SeqCst), 1);
    assert_eq!(holder(&api), serde_json::Value::Null, "released");
    let renewals = api.log().iter().filter(|l| l.starts_with("PUT")).count();
    assert!(renewals >= 3, "renewed every retry period: {renewals}");
}

#[test]
fn fingerprint_changes_with_renewal() {
    let mut a = lease(Some("b"));
    let before = fingerprint(&a);
    if let Some(spec) = a.spec.as_mut() {
        spec.renew_time = Some(MicroTime(Timestamp::UNIX_EPOCH));
    }
    assert_ne!(before, fingerprint(&a));
}
