//! Who controls the pod: Pod → ReplicaSet → Deployment, Pod → StatefulSet,
//! Pod → Job → CronJob, with the Job's and CronJob's state.
//!
//! Only the hops that need an object are looked up (the ReplicaSet to find
//! its Deployment, the Job for its counts, the CronJob for its policy), so a
//! kind missing from the view only makes owners Unknown for pods that need it.

use super::{CronJobFacts, JobFacts, OwnerFacts, OwnerRef};
use crate::cluster::record::{self, CronJob, Job, Pod};
use crate::cluster::{ClusterView, Unknown};

pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";

pub(super) fn gather(pod: &Pod, view: &dyn ClusterView) -> Result<OwnerFacts, Unknown> {
    let namespace = pod.meta.namespace.as_str();
    let mut facts = OwnerFacts::default();
    let Some(owner) = &pod.controller else {
        return Ok(facts);
    };
    facts.chain.push(owner_ref(owner));
    match owner.kind.as_str() {
        "ReplicaSet" => {
            if let Some(rs) = view.replica_set(namespace, &owner.name)?
                && let Some(parent) = &rs.controller
            {
                facts.chain.push(owner_ref(parent));
            }
        }
        "StatefulSet" => facts.stateful_set = Some(owner.name.clone()),
        "Job" => {
            let tracking = pod.finalizers.iter().any(|f| f == JOB_TRACKING_FINALIZER);
            match view.job(namespace, &owner.name)? {
                Some(job) => {
                    facts.job = Some(describe_job(&job, tracking));
                    if let Some(parent) = &job.controller {
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

fn owner_ref(owner: &record::OwnerRef) -> OwnerRef {
    OwnerRef {
        kind: owner.kind.clone(),
        name: owner.name.clone(),
        uid: Some(owner.uid.clone()).filter(|u| !u.is_empty()),
    }
}

fn describe_job(job: &Job, tracking_finalizer: bool) -> JobFacts {
    JobFacts {
        name: job.meta.name.clone(),
        active: job.active,
        succeeded: job.succeeded,
        failed: job.failed,
        finished: job.finished,
        tracking_finalizer,
        exists: true,
    }
}

fn describe_cron_job(cron: &CronJob) -> CronJobFacts {
    CronJobFacts {
        name: cron.meta.name.clone(),
        concurrency_policy: cron
            .concurrency_policy
            .clone()
            .unwrap_or_else(|| "Allow".to_owned()),
        suspend: cron.suspend,
        active: cron.active,
    }
}
