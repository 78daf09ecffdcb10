//! Pod owners: Jobs and CronJobs with their state; StatefulSets,
//! ReplicaSets and Deployments for identity and ownership only.

use super::{Meta, OwnerRef, controller_of};

/// Job: counts, whether it finished, and pods it has not counted yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Job {
    pub meta: Meta,
    pub controller: Option<OwnerRef>,
    pub active: i32,
    pub succeeded: i32,
    pub failed: i32,
    /// Has a `Complete` or `Failed` condition with status `True`.
    pub finished: bool,
    /// `status.uncountedTerminatedPods`, succeeded and failed.
    pub uncounted: Vec<String>,
}

impl From<k8s_openapi::api::batch::v1::Job> for Job {
    fn from(job: k8s_openapi::api::batch::v1::Job) -> Self {
        let status = job.status.unwrap_or_default();
        let finished = status
            .conditions
            .iter()
            .flatten()
            .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True");
        let uncounted = status
            .uncounted_terminated_pods
            .into_iter()
            .flat_map(|u| u.succeeded.into_iter().chain(u.failed).flatten())
            .collect();
        Job {
            controller: controller_of(job.metadata.owner_references.as_deref()),
            meta: job.metadata.into(),
            active: status.active.unwrap_or(0),
            succeeded: status.succeeded.unwrap_or(0),
            failed: status.failed.unwrap_or(0),
            finished,
            uncounted,
        }
    }
}

/// CronJob: its concurrency policy and running Jobs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CronJob {
    pub meta: Meta,
    pub concurrency_policy: Option<String>,
    pub suspend: bool,
    /// Jobs in `status.active`.
    pub active: usize,
}

impl From<k8s_openapi::api::batch::v1::CronJob> for CronJob {
    fn from(cron: k8s_openapi::api::batch::v1::CronJob) -> Self {
        CronJob {
            meta: cron.metadata.into(),
            concurrency_policy: cron.spec.concurrency_policy,
            suspend: cron.spec.suspend.unwrap_or(false),
            active: cron
                .status
                .and_then(|s| s.active)
                .map_or(0, |active| active.len()),
        }
    }
}

/// ReplicaSet: the Deployment that controls it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaSet {
    pub meta: Meta,
    pub controller: Option<OwnerRef>,
}

impl From<k8s_openapi::api::apps::v1::ReplicaSet> for ReplicaSet {
    fn from(set: k8s_openapi::api::apps::v1::ReplicaSet) -> Self {
        ReplicaSet {
            controller: controller_of(set.metadata.owner_references.as_deref()),
            meta: set.metadata.into(),
        }
    }
}

/// StatefulSet: identity only (pods name it in their owner reference).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatefulSet {
    pub meta: Meta,
}

impl From<k8s_openapi::api::apps::v1::StatefulSet> for StatefulSet {
    fn from(set: k8s_openapi::api::apps::v1::StatefulSet) -> Self {
        StatefulSet {
            meta: set.metadata.into(),
        }
    }
}

/// Deployment: identity only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deployment {
    pub meta: Meta,
}

impl From<k8s_openapi::api::apps::v1::Deployment> for Deployment {
    fn from(deployment: k8s_openapi::api::apps::v1::Deployment) -> Self {
        Deployment {
            meta: deployment.metadata.into(),
        }
    }
}
