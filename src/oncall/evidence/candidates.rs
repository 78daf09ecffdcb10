//! Evidence that a controller runs: workloads with ready replicas, running
//! pods and renewed Leases, each with the words a finalizer's domain is
//! matched against.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::decode;
use super::{Candidate, kinds};
use crate::oncall::render::age;
use crate::oncall::seconds_between;

/// Labels that name an application; their values are matched against finalizers.
const APP_LABELS: [&str; 5] = [
    "app",
    "app.kubernetes.io/name",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/instance",
    "k8s-app",
];

/// A Deployment, StatefulSet, DaemonSet or Lease (`kind` is `Kind.group`).
pub(super) fn candidate(kind: &str, object: &Value, now: Timestamp) -> Result<Candidate, String> {
    let (shown, meta, template, ready, want) = match kind {
        kinds::DEPLOYMENT => {
            let d: Deployment = decode(object)?;
            let (spec, status) = (d.spec.unwrap_or_default(), d.status.unwrap_or_default());
            let ready = status.ready_replicas.unwrap_or(0);
            (
                "Deployment",
                d.metadata,
                spec.template,
                ready,
                spec.replicas.unwrap_or(1),
            )
        }
        kinds::STATEFUL_SET => {
            let s: StatefulSet = decode(object)?;
            let (spec, status) = (s.spec.unwrap_or_default(), s.status.unwrap_or_default());
            let ready = status.ready_replicas.unwrap_or(0);
            (
                "StatefulSet",
                s.metadata,
                spec.template,
                ready,
                spec.replicas.unwrap_or(1),
            )
        }
        kinds::DAEMON_SET => {
            let d: DaemonSet = decode(object)?;
            let (spec, status) = (d.spec.unwrap_or_default(), d.status.unwrap_or_default());
            let (ready, want) = (status.number_ready, status.desired_number_scheduled);
            ("DaemonSet", d.metadata, spec.template, ready, want)
        }
        kinds::LEASE => return Ok(lease_candidate(decode(object)?, now)),
        _ => return Err(format!("{kind} is not a controller candidate")),
    };
    Ok(workload(shown, meta, &template, ready, want))
}

fn workload(
    kind: &str,
    meta: ObjectMeta,
    template: &PodTemplateSpec,
    ready: i32,
    want: i32,
) -> Candidate {
    let images: Vec<&str> = (template.spec.iter())
        .flat_map(|s| s.containers.iter())
        .filter_map(|c| c.image.as_deref())
        .collect();
    let state = if want == 0 {
        "scaled to 0".to_owned()
    } else {
        format!("{ready}/{want} ready")
    };
    Candidate {
        kind: kind.into(),
        haystack: haystack(&meta, &images, &[]),
        namespace: meta.namespace.unwrap_or_default(),
        name: meta.name.unwrap_or_default(),
        alive: ready > 0,
        state,
    }
}

fn lease_candidate(lease: Lease, now: Timestamp) -> Candidate {
    let spec = lease.spec.unwrap_or_default();
    let holder = spec.holder_identity.unwrap_or_default();
    let renewed = spec.renew_time.or(spec.acquire_time).map(|t| t.0);
    let duration = SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(0)));
    let expires = renewed.and_then(|r| r.checked_add(duration).ok());
    let alive = !holder.is_empty() && expires.is_some_and(|e| e > now);
    let ago = |at| age(seconds_between(at, now));
    let state = match (renewed, alive) {
        (None, _) => "never renewed".to_owned(),
        (Some(at), true) => format!("held by {holder}, renewed {} ago", ago(at)),
        (Some(at), false) => format!("expired; last renewed {} ago", ago(at)),
    };
    Candidate {
        kind: "Lease".into(),
        haystack: haystack(&lease.metadata, &[], &[&holder]),
        namespace: lease.metadata.namespace.unwrap_or_default(),
        name: lease.metadata.name.unwrap_or_default(),
        alive,
        state,
    }
}

/// Lowercase words a finalizer's domain is matched against.
pub(super) fn haystack(meta: &ObjectMeta, images: &[&str], extra: &[&str]) -> String {
    let empty = BTreeMap::new();
    let labels = meta.labels.as_ref().unwrap_or(&empty);
    let mut parts: Vec<&str> = vec![
        meta.name.as_deref().unwrap_or_default(),
        meta.namespace.as_deref().unwrap_or_default(),
    ];
    parts.extend(
        APP_LABELS
            .iter()
            .filter_map(|k| labels.get(*k).map(String::as_str)),
    );
    // An image's registry host says nothing about what runs.
    parts.extend(images.iter().map(|image| match image.split_once('/') {
        Some((host, path)) if host.contains(['.', ':']) || host == "localhost" => path,
        _ => image,
    }));
    parts.extend(extra);
    parts.join(" ").to_lowercase()
}
