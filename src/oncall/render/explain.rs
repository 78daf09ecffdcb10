//! `explain` as a report: the object, the facts, each action's decision
//! policy by policy, what forcing would leave behind, the safe path.

use std::fmt::Write as _;

use super::{Style, age, checklist_item, table};
use crate::cleanup::{ChecklistItem, ItemState};
use crate::facts::Facts;
use crate::oncall::explain::{ActionReport, Explanation, LeaseRenewal};

/// The whole report.
pub fn report(explanation: &Explanation, style: Style) -> String {
    let mut out = String::new();
    let subject = match &explanation.namespace {
        Some(ns) => format!("{} {ns}/{}", explanation.kind, explanation.name),
        None => format!("{} {}", explanation.kind, explanation.name),
    };
    let user = &explanation.user;
    let _ = writeln!(out, "{}", style.bold(&subject));
    let _ = writeln!(
        out,
        "  as {} (groups: {})",
        user.username,
        join_or(&user.groups, "none")
    );
    let _ = writeln!(
        out,
        "  finalizers: {}",
        join_or(&explanation.finalizers, "none")
    );
    if explanation.actions.is_empty() {
        let _ = writeln!(
            out,
            "\nNothing to force: it is not a pod and has no finalizers."
        );
        return out;
    }
    let facts = facts_lines(explanation);
    if !facts.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Facts"));
        facts.iter().for_each(|l| {
            let _ = writeln!(out, "  {l}");
        });
    }
    for (i, action) in explanation.actions.iter().enumerate() {
        let same = explanation.actions[..i]
            .iter()
            .find(|earlier| same_verdicts(earlier, action));
        decision(action, same, style, &mut out);
    }
    left_behind(explanation, style, &mut out);
    let _ = writeln!(out, "\n{}", style.bold("Safe path"));
    for (i, step) in explanation.safe_path.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, step.why);
        if let Some(command) = &step.command {
            let _ = writeln!(out, "     $ {command}");
        }
    }
    out
}

fn join_or(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_owned()
    } else {
        items.join(", ")
    }
}

/// An eviction usually gets exactly the delete's verdicts: said once.
fn same_verdicts(a: &ActionReport, b: &ActionReport) -> bool {
    (a.not_gated.is_none() && b.not_gated.is_none())
        && (a.allowed, a.record, &a.policies, &a.warnings)
            == (b.allowed, b.record, &b.policies, &b.warnings)
}

fn decision(action: &ActionReport, same: Option<&ActionReport>, style: Style, out: &mut String) {
    let verdict = match (&action.not_gated, action.allowed, action.record) {
        (Some(_), _, _) => style.green("not gated"),
        (None, false, _) => style.red("DENIED"),
        (None, true, true) => style.yellow("ALLOWED, with a cleanup record"),
        (None, true, false) => style.green("ALLOWED"),
    };
    let _ = writeln!(out, "\n{}: {verdict}", style.bold(action.action.title()));
    let _ = writeln!(out, "  $ {}", action.command);
    if let Some(reason) = &action.not_gated {
        let _ = writeln!(out, "  {reason}");
        return;
    }
    if let Some(earlier) = same {
        let _ = writeln!(out, "  the same verdicts as the {}", earlier.action.title());
        return;
    }
    let rows: Vec<Vec<String>> = (action.policies.iter())
        .map(|p| match p.fired.as_slice() {
            [] => vec![p.policy.clone(), "-".into(), "did not fire".into()],
            fired => vec![
                p.policy.clone(),
                fired
                    .iter()
                    .map(|o| o.action.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                fired
                    .iter()
                    .map(|o| o.fact.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            ],
        })
        .collect();
    for line in table(&["POLICY", "VERDICT", "BECAUSE"], &rows).lines() {
        let _ = writeln!(out, "  {line}");
    }
    if !action.message.is_empty() {
        let _ = writeln!(out, "  forcegate would answer:");
        for line in action.message.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    for warning in &action.warnings {
        let _ = writeln!(out, "  {} {warning}", style.yellow("warning:"));
    }
}

/// Each distinct checklist once, naming the actions that would open it.
fn left_behind(explanation: &Explanation, style: Style, out: &mut String) {
    let mut shown: Vec<(&[ChecklistItem], Vec<&str>)> = Vec::new();
    for action in explanation.actions.iter().filter(|a| a.not_gated.is_none()) {
        match shown
            .iter_mut()
            .find(|(items, _)| *items == action.left_behind.as_slice())
        {
            Some((_, titles)) => titles.push(action.action.title()),
            None => shown.push((&action.left_behind, vec![action.action.title()])),
        }
    }
    for (items, titles) in shown {
        let _ = writeln!(
            out,
            "\n{} ({})",
            style.bold("If forced anyway, the verifier would open"),
            titles.join(", ")
        );
        if items.is_empty() {
            let _ = writeln!(out, "  nothing");
        }
        // Node-side steps last, under their own heading, as `records show` has them.
        let (api, manual): (Vec<&ChecklistItem>, Vec<&ChecklistItem>) =
            items.iter().partition(|i| i.state != ItemState::Manual);
        for item in api {
            checklist_item(item, style, out);
        }
        if !manual.is_empty() {
            let _ = writeln!(out, "  on the node (the API cannot show these):");
            for item in manual {
                checklist_item(item, style, out);
            }
        }
    }
}

/// The facts behind the verdicts, from the richest action (pods: the delete).
fn facts_lines(explanation: &Explanation) -> Vec<String> {
    let mut lines = Vec::new();
    let mut seen_finalizers = false;
    for facts in explanation.actions.iter().map(|a| &a.facts) {
        if !seen_finalizers && !facts.finalizers.is_empty() {
            seen_finalizers = true;
            for f in &facts.finalizers {
                let owner = f.owner.as_deref().unwrap_or(if f.well_known {
                    "Kubernetes"
                } else {
                    "a controller forcegate does not know"
                });
                lines.push(format!("finalizer {}: owned by {owner}", f.name));
            }
        }
    }
    if let Some(facts) = explanation.actions.first().map(|a| &a.facts) {
        pod_lines(facts, &explanation.leases, &mut lines);
        other_lines(facts, &mut lines);
        for (group, why) in &facts.unknown {
            lines.push(format!("unknown {group}: {why}"));
        }
    }
    for facts in explanation.actions.iter().skip(1).map(|a| &a.facts) {
        other_lines(facts, &mut lines);
    }
    let mut unique = Vec::new();
    for line in lines {
        if !unique.contains(&line) {
            unique.push(line);
        }
    }
    unique
}

fn pod_lines(facts: &Facts, leases: &[LeaseRenewal], lines: &mut Vec<String>) {
    if let Some(node) = &facts.node {
        let state = if !node.exists {
            "gone".to_owned()
        } else {
            let ready = if node.ready {
                "Ready".to_owned()
            } else {
                format!(
                    "not Ready (Ready={})",
                    node.ready_status.as_deref().unwrap_or("missing")
                )
            };
            let heartbeat = node
                .heartbeat_age_seconds
                .map(|s| format!(", last heartbeat {} ago", age(s)))
                .unwrap_or_default();
            let reach = if node.unreachable {
                ", unreachable"
            } else {
                ""
            };
            let fenced = if node.fenced {
                ", fenced (out-of-service)"
            } else {
                ", not fenced"
            };
            format!("{ready}{heartbeat}{reach}{fenced}")
        };
        lines.push(format!("node {}: {state}", node.name));
    }
    if let Some(owners) = &facts.owners {
        let chain: Vec<String> = owners
            .chain
            .iter()
            .map(|o| format!("{} {}", o.kind, o.name))
            .collect();
        lines.push(format!("owners: {}", join_or(&chain, "none")));
        if let Some(job) = &owners.job {
            let state = if job.finished {
                "finished"
            } else if job.active > 0 {
                "active"
            } else {
                "not finished"
            };
            lines.push(format!(
                "job {}: {state} (active={} succeeded={} failed={})",
                job.name, job.active, job.succeeded, job.failed
            ));
        }
        if let Some(cron) = &owners.cron_job {
            lines.push(format!(
                "cronjob {}: concurrencyPolicy {}, suspend {}, {} active",
                cron.name, cron.concurrency_policy, cron.suspend, cron.active
            ));
        }
    }
    if let Some(leader) = &facts.leader {
        lines.push(format!(
            "leader: {}",
            if leader.is_leader { "yes" } else { "no" }
        ));
        for lease in &leader.leases {
            let renewed = (leases.iter())
                .find(|l| l.namespace == lease.namespace && l.name == lease.name)
                .and_then(|l| l.renewed_seconds_ago)
                .map(|s| format!(", renewed {} ago", age(s)))
                .unwrap_or_default();
            let expiry = match (lease.expired, lease.expires_in_seconds) {
                (true, _) => "expired".to_owned(),
                (false, Some(s)) => format!("expires in {}", age(s)),
                (false, None) => "held".to_owned(),
            };
            lines.push(format!(
                "  Lease {}/{} held by {}{renewed}, {expiry}",
                lease.namespace, lease.name, lease.holder
            ));
        }
        for record in &leader.legacy_records {
            lines.push(format!("  legacy leader record {record}"));
        }
    }
    if let Some(volumes) = &facts.volumes {
        for claim in &volumes.claims {
            let attachments: Vec<String> = (claim.attachments.iter())
                .map(|a| {
                    format!(
                        "{} on {} ({})",
                        a.name,
                        a.node,
                        if a.attached { "attached" } else { "detaching" }
                    )
                })
                .collect();
            lines.push(format!(
                "volume: claim {} → PV {} [{}], VolumeAttachments: {}",
                claim.claim,
                claim.persistent_volume.as_deref().unwrap_or("unbound"),
                claim.access_modes.join(","),
                join_or(&attachments, "none")
            ));
        }
    }
    if let Some(endpoints) = &facts.endpoints {
        lines.push(format!(
            "endpoints: {}",
            if endpoints.referenced {
                format!("listed by EndpointSlice {}", endpoints.slices.join(", "))
            } else {
                "no EndpointSlice lists the pod".into()
            }
        ));
    }
}

fn other_lines(facts: &Facts, lines: &mut Vec<String>) {
    if let Some(claim) = &facts.claim {
        lines.push(format!(
            "claim {}/{}: used by {}",
            claim.namespace,
            claim.name,
            join_or(&claim.used_by, "no running pod")
        ));
    }
    if let Some(pv) = &facts.persistent_volume {
        let attached: Vec<String> = pv
            .attachments
            .iter()
            .filter(|a| a.attached)
            .map(|a| format!("{} on {}", a.name, a.node))
            .collect();
        lines.push(format!(
            "PV {}: {}{}, attached: {}",
            pv.name,
            pv.phase.as_deref().unwrap_or("no phase"),
            pv.claim
                .as_deref()
                .map(|c| format!(" to {c}"))
                .unwrap_or_default(),
            join_or(&attached, "nowhere")
        ));
    }
    if let Some(ns) = &facts.namespace {
        let counts: Vec<String> = ns
            .counts
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        lines.push(format!(
            "namespace {}: {}, holds {}",
            ns.name,
            ns.phase.as_deref().unwrap_or("no phase"),
            join_or(&counts, "nothing")
        ));
    }
}
