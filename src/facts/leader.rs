//! Does the pod hold leadership that a same-name replacement would contest?
//!
//! A Lease counts while `renewTime + leaseDurationSeconds` is in the future:
//! an expired lease is up for grabs, so its former holder is not the leader.
//! A lease without those times cannot be shown expired and counts as held.
//! Legacy `control-plane.alpha.kubernetes.io/leader` records on Endpoints and
//! ConfigMaps follow the same rule.

use k8s_openapi::jiff::Timestamp;

use super::{LeaderFacts, LeaseFacts, PodFacts};
use crate::cluster::record::Lease;
use crate::cluster::{ClusterView, Unknown};

pub(super) fn gather(
    pod: &PodFacts,
    view: &dyn ClusterView,
    now: Timestamp,
) -> Result<LeaderFacts, Unknown> {
    let leases: Vec<LeaseFacts> = view
        .leases_held_by(&pod.namespace, &pod.name)?
        .iter()
        .map(|lease| describe_lease(lease, now))
        .collect();
    let holds_lease = leases.iter().any(|l| !l.expired);
    // Legacy records only matter when no lease already settles it.
    let legacy_records = match view.legacy_leader_records(&pod.namespace, &pod.name) {
        Ok(records) => records
            .into_iter()
            .filter(|(_, _, raw)| !legacy_expired(raw, now))
            .map(|(kind, name, _)| format!("{kind}/{name}"))
            .collect(),
        Err(_) if holds_lease => Vec::new(),
        Err(why) => return Err(why),
    };
    Ok(LeaderFacts {
        is_leader: holds_lease || !legacy_records.is_empty(),
        leases,
        legacy_records,
    })
}

fn describe_lease(lease: &Lease, now: Timestamp) -> LeaseFacts {
    let renewed = lease.renew_time.or(lease.acquire_time);
    let expires_in_ms = match (renewed, lease.duration_seconds) {
        (Some(renewed), Some(duration)) => {
            Some(renewed.as_millisecond() + i64::from(duration) * 1000 - now.as_millisecond())
        }
        _ => None,
    };
    LeaseFacts {
        namespace: lease.meta.namespace.clone(),
        name: lease.meta.name.clone(),
        holder: lease.holder.clone().unwrap_or_default(),
        expired: expires_in_ms.is_some_and(|ms| ms < 0),
        expires_in_seconds: expires_in_ms.map(|ms| ms.div_euclid(1000)),
    }
}

/// A legacy record is expired when its renewTime plus leaseDurationSeconds
/// is past; unparseable records are treated as held.
fn legacy_expired(raw: &str, now: Timestamp) -> bool {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Record {
        lease_duration_seconds: Option<i64>,
        renew_time: Option<String>,
    }
    let Ok(record) = serde_json::from_str::<Record>(raw) else {
        return false;
    };
    let renewed = record.renew_time.and_then(|t| t.parse::<Timestamp>().ok());
    match (renewed, record.lease_duration_seconds) {
        (Some(renewed), Some(duration)) => {
            renewed.as_millisecond() + duration * 1000 < now.as_millisecond()
        }
        _ => false,
    }
}
