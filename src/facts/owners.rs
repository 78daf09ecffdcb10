//! Who controls the pod: Pod → ReplicaSet → Deployment, Pod → StatefulSet,
//! Pod → Job → CronJob, with the Job's and CronJob's state.
//!
//! Only the hops that need an object are looked up (the ReplicaSet to find
//! its Deployment, the Job for its counts, the CronJob for its policy), so a
//! kind missing from the view only makes owners Unknown for pods that need it.

use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::{CronJobFacts, JobFacts, OwnerFacts, OwnerRef};
use crate::cluster::{ClusterView, Unknown};

pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";

pub(super) fn gather(pod: &Pod, view: &dyn ClusterView) -> Result<OwnerFacts, Unknown> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let mut facts = OwnerFacts::default();
    let Some(owner) = controller_of(&pod.metadata) else {
        return Ok(facts);
    };
    facts.chain.push(owner_ref(owner));
    match owner.kind.as_str() {
        "ReplicaSet" => {
            if let Some(rs) = view.replica_set(namespace, &owner.name)?
                && let Some(parent) = controller_of(&rs.metadata)
            {
                facts.chain.push(owner_ref(parent));
            }
        }
        "StatefulSet" => facts.stateful_set = Some(owner.name.clone()),
        "Job" => {
            let tracking = pod
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == JOB_TRACKING_FINALIZER);
            match view.job(namespace, &owner.name)? {
                Some(job) => {
                    facts.job = Some(describe_job(&job, tracking));
                    if let Some(parent) = controller_of(&job.metadata) {
                        facts.chain.push(owner_ref(parent));
                        if parent.kind == "CronJob" {
                            facts.cron_job = view
                                .cron_job(namespace, &parent.name)?
                                .map(|cron| describe_cron_job(&cron));
                        }
                    }
                }
                None => {
                    facts.job = Some(JobFacts {
                        name: owner.name.clone(),
                        tracking_finalizer: tracking,
                        exists: false,
                        ..JobFacts::default()
                    })
                }
            }
        }
        _ => {}
    }
    Ok(facts)
}

/// The managing controller (`controller: true`), else the first owner.
fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    let owners = meta.owner_references.as_deref()?;
    owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or_else(|| owners.first())
}

fn owner_ref(owner: &OwnerReference) -> OwnerRef {
    OwnerRef {
        kind: owner.kind.clone(),
        name: owner.name.clone(),
        uid: Some(owner.uid.clone()).filter(|u| !u.is_empty()),
    }
}

fn describe_job(job: &Job, tracking_finalizer: bool) -> JobFacts {
    let status = job.status.as_ref();
    let finished = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True");
    JobFacts {
        name: job.metadata.name.clone().unwrap_or_default(),
        active: status.and_then(|s| s.active).unwrap_or(0),
        succeeded: status.and_then(|s| s.succeeded).unwrap_or(0),
        failed: status.and_then(|s| s.failed).unwrap_or(0),
        finished,
        tracking_finalizer,
        exists: true,
    }
}

fn describe_cron_job(cron: &CronJob) -> CronJobFacts {
    CronJobFacts {
        name: cron.metadata.name.clone().unwrap_or_default(),
        concurrency_policy: cron
            .spec
            .concurrency_policy
            .clone()
            .unwrap_or_else(|| "Allow".to_owned()),
        suspend: cron.spec.suspend.unwrap_or(false),
        active: cron
            .status
            .as_ref()
            .and_then(|s| s.active.as_ref())
            .map_or(0, Vec::len),
    }
}
