use super::*;
use crate::cluster::SnapshotCluster;

#[test]
fn a_blocker_keeps_the_replica_unready_until_cleared() {
    let cluster = SnapshotCluster::load::<&str>(&[]).expect("an empty snapshot");
    let health = Health::default();
    assert!(health.readiness(&cluster).ready);
    health.set_blocker("certificate", Some("not trusted yet".into()));
    let readiness = health.readiness(&cluster);
    assert!(!readiness.ready);
    assert_eq!(readiness.reasons, ["not trusted yet"]);
    health.set_blocker("certificate", None);
    assert!(health.readiness(&cluster).ready);
}
