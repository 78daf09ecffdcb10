//! The safe path instead of forcing: the steps the facts call for, as
//! commands to copy (graceful delete, fence the node, fail over the leader,
//! wait for the Job, delete what still uses a claim, ...).

use serde::Serialize;

use super::{ActionReport, Target};
use crate::facts::Facts;

/// One step, and why the facts call for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    pub why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

fn step(why: impl Into<String>, command: Option<String>) -> Step {
    Step {
        why: why.into(),
        command,
    }
}

/// The steps for `target`, from the facts the actions gathered.
pub fn safe_path(target: &Target, actions: &[ActionReport]) -> Vec<Step> {
    let mut steps = Vec::new();
    let ns = target.namespace.as_deref().unwrap_or_default();
    for facts in actions.iter().map(|a| &a.facts) {
        pod_steps(facts, ns, &target.name, &mut steps);
        storage_steps(facts, &mut steps);
        namespace_steps(facts, &mut steps);
        finalizer_steps(target, facts, &mut steps);
    }
    let mut unique: Vec<Step> = Vec::new();
    for s in steps {
        if !unique.contains(&s) {
            unique.push(s);
        }
    }
    if unique.is_empty() && actions.iter().all(|a| a.allowed && !a.record) {
        unique.push(step(
            "forcegate would allow this without leaving anything to clean up",
            None,
        ));
    }
    unique
}

fn pod_steps(facts: &Facts, ns: &str, pod: &str, steps: &mut Vec<Step>) {
    let Some(node) = facts.node.as_ref() else {
        return;
    };
    let fenced = node.fenced;
    if node.exists && node.ready {
        steps.push(step(
            format!(
                "node {} is Ready: its kubelet finishes a graceful delete",
                node.name
            ),
            Some(format!("kubectl -n {ns} delete pod {pod}")),
        ));
    } else if !fenced {
        steps.push(step(
            format!(
                "node {} is not Ready and not fenced: if it is really down (powered off, VM gone), fence it; the pod garbage collector then removes the pod, its volumes detach and a replacement cannot meet a ghost",
                node.name
            ),
            Some(format!(
                "kubectl taint nodes {} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute",
                node.name
            )),
        ));
    }
    if let Some(leader) = facts.leader.as_ref().filter(|l| l.is_leader && !fenced) {
        for lease in leader.leases.iter().filter(|l| !l.expired) {
            steps.push(step(
                format!(
                    "it leads through Lease {}/{} (holder {}): fail over first (move leadership, or let the lease expire once the old process is stopped) and watch the holder change",
                    lease.namespace, lease.name, lease.holder
                ),
                Some(format!("kubectl -n {} get lease {} -w", lease.namespace, lease.name)),
            ));
        }
        for record in &leader.legacy_records {
            steps.push(step(
                format!("it leads through the legacy leader record {record}: fail over first"),
                None,
            ));
        }
    }
    if let Some(owners) = facts.owners.as_ref().filter(|_| !fenced)
        && let Some(job) = (owners.job.as_ref()).filter(|j| j.exists && !j.finished && j.active > 0)
    {
        {
            steps.push(step(
                format!("it runs for the active Job {}: wait for the Job, or a duplicate or lost run follows", job.name),
                Some(format!("kubectl -n {ns} wait --for=condition=complete job/{} --timeout=30m", job.name)),
            ));
            if let Some(cron) = owners.cron_job.as_ref() {
                steps.push(step(
                    format!("to stop new runs meanwhile, suspend CronJob {}", cron.name),
                    Some(format!("kubectl -n {ns} patch cronjob {} --type=merge -p '{{\"spec\":{{\"suspend\":true}}}}'", cron.name)),
                ));
            }
        }
    }
}

fn storage_steps(facts: &Facts, steps: &mut Vec<Step>) {
    if let Some(claim) = facts.claim.as_ref().filter(|c| c.in_use) {
        steps.push(step(
            format!(
                "claim {}/{} is still used by {}: delete or move those pods first",
                claim.namespace,
                claim.name,
                claim.used_by.join(", ")
            ),
            Some(format!(
                "kubectl -n {} delete pod {}",
                claim.namespace,
                claim.used_by.join(" ")
            )),
        ));
    }
    if let Some(volume) = facts.persistent_volume.as_ref() {
        if let Some(claim) = volume.claim.as_deref().filter(|_| volume.bound) {
            steps.push(step(
                format!(
                    "PV {} is bound to claim {claim}: delete the claim first",
                    volume.name
                ),
                None,
            ));
        }
        for a in volume.attachments.iter().filter(|a| a.attached) {
            steps.push(step(
                format!(
                    "PV {} is attached to node {} (VolumeAttachment {}): wait for the detach",
                    volume.name, a.node, a.name
                ),
                Some(format!("kubectl get volumeattachment {} -w", a.name)),
            ));
        }
    }
}

fn namespace_steps(facts: &Facts, steps: &mut Vec<Step>) {
    let Some(namespace) = facts.namespace.as_ref().filter(|n| !n.empty) else {
        return;
    };
    let counts: Vec<String> = namespace
        .counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    steps.push(step(
        format!(
            "namespace {} still holds {}: finalizing would orphan them; find out what keeps the namespace controller from deleting them",
            namespace.name,
            counts.join(", ")
        ),
        Some(format!("kubectl forcegate stuck -n {}", namespace.name)),
    ));
}

fn finalizer_steps(target: &Target, facts: &Facts, steps: &mut Vec<Step>) {
    let scope = target
        .namespace
        .as_deref()
        .map_or_else(|| " -A".to_owned(), |ns| format!(" -n {ns}"));
    for finalizer in facts.finalizers.iter().filter(|f| !f.well_known) {
        steps.push(step(
            format!(
                "{} belongs to a controller forcegate does not know: check whether it still runs (stripping skips its cleanup for good)",
                finalizer.name
            ),
            Some(format!("kubectl forcegate stuck{scope}")),
        ));
    }
}
