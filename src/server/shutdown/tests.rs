use super::*;

#[tokio::test]
async fn every_clone_sees_the_trigger() {
    let shutdown = Shutdown::new();
    let waiter = shutdown.clone();
    let task = tokio::spawn(async move { waiter.triggered().await });
    assert!(!shutdown.is_triggered());
    shutdown.trigger();
    shutdown.trigger();
    task.await.expect("waiter finishes");
    assert!(shutdown.clone().is_triggered());
    // Already triggered: resolves at once.
    shutdown.triggered().await;
}
