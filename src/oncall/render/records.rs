//! `records` as a table, and `records show` as a report with every
//! checklist item, its evidence and the node-side commands.

use std::fmt::Write as _;

use super::{Style, age, checklist_item, table};
use crate::cleanup::{ItemState, Phase};
use crate::oncall::records::{Detail, Summary, Verified};

fn phase_text(summary: &Summary) -> String {
    let phase = summary.phase.as_str();
    match summary.verified {
        Verified::ByVerifier => phase.to_owned(),
        Verified::Now => format!("{phase} (checked now)"),
        Verified::No => format!("{phase} (not verified)"),
    }
}

fn paint_phase(style: Style, phase: Phase, text: &str) -> String {
    match phase {
        Phase::Clean => style.green(text),
        Phase::NeedsAttention => style.red(text),
        Phase::Pending | Phase::Verifying => style.yellow(text),
    }
}

pub fn list(summaries: &[Summary]) -> String {
    if summaries.is_empty() {
        return "No ForceDeletion records.\n".into();
    }
    let rows: Vec<Vec<String>> = (summaries.iter())
        .map(|s| {
            vec![
                s.name.clone(),
                s.object.clone(),
                s.node.clone().unwrap_or_else(|| "-".into()),
                s.requester.clone(),
                age(s.age_seconds),
                phase_text(s),
                if s.open.is_empty() {
                    "-".into()
                } else {
                    s.open.join(",")
                },
            ]
        })
        .collect();
    table(
        &[
            "NAME",
            "OBJECT",
            "NODE",
            "REQUESTER",
            "AGE",
            "PHASE",
            "OPEN",
        ],
        &rows,
    )
}

pub fn show(detail: &Detail, style: Style) -> String {
    let mut out = String::new();
    let spec = &detail.record.spec;
    let s = &detail.summary;
    let _ = writeln!(
        out,
        "{}  {}",
        style.bold(&s.name),
        paint_phase(style, s.phase, &phase_text(s))
    );
    let _ = writeln!(
        out,
        "  object:     {} (uid {})",
        spec.subject,
        spec.object.uid.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(
        out,
        "  action:     {}{}",
        spec.action.type_,
        removed(&spec.action.removed_finalizers)
    );
    let _ = writeln!(
        out,
        "  requested:  by {} at {} ({} ago)",
        spec.requester.username,
        spec.requested_at.0,
        age(s.age_seconds)
    );
    if let Some(reason) = &spec.break_glass_reason {
        let _ = writeln!(out, "  break-glass: {reason}");
    }
    if let Some(node) = &spec.node {
        let _ = writeln!(out, "  node:       {node}");
    }
    if !spec.pod_ips.is_empty() {
        let _ = writeln!(out, "  pod IPs:    {}", spec.pod_ips.join(", "));
    }
    for v in &spec.volumes {
        let attachments: Vec<String> = v
            .attachments
            .iter()
            .map(|a| format!("{} on {}", a.name, a.node))
            .collect();
        let _ = writeln!(
            out,
            "  volume:     claim {} → PV {} ({})",
            v.claim,
            v.persistent_volume.as_deref().unwrap_or("unbound"),
            attachments.join(", ")
        );
    }
    for l in &spec.leases {
        let _ = writeln!(
            out,
            "  lease:      {}/{} held by {}{}",
            l.namespace,
            l.name,
            l.holder,
            if l.expired { " (expired)" } else { "" }
        );
    }
    if !spec.owners.is_empty() {
        let owners: Vec<String> = spec
            .owners
            .iter()
            .map(|o| format!("{} {}", o.kind, o.name))
            .collect();
        let _ = writeln!(out, "  owners:     {}", owners.join(" → "));
    }
    for p in &spec.policies {
        let _ = writeln!(
            out,
            "  policy:     {} {} ({})",
            p.policy,
            p.action.as_str(),
            p.fact
        );
    }
    if let Some(status) = &detail.record.status {
        for c in &status.conditions {
            let _ = writeln!(
                out,
                "  condition:  {}={} {}{}",
                c.type_,
                c.status,
                c.reason,
                if c.message.is_empty() {
                    String::new()
                } else {
                    format!(": {}", c.message)
                }
            );
        }
    }
    let _ = writeln!(out, "\n{}", style.bold("Checklist"));
    if detail.items.is_empty() {
        let _ = writeln!(
            out,
            "  {}",
            if s.verified == Verified::No {
                "not verified yet (give --cluster to check a journal record now)"
            } else {
                "empty"
            }
        );
    }
    for item in detail.items.iter().filter(|i| i.state != ItemState::Manual) {
        checklist_item(item, style, &mut out);
    }
    let manual: Vec<_> = detail
        .items
        .iter()
        .filter(|i| i.state == ItemState::Manual)
        .collect();
    if !manual.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("On the node (the API cannot show these)")
        );
        for item in manual {
            checklist_item(item, style, &mut out);
        }
    }
    out
}

fn removed(finalizers: &[String]) -> String {
    if finalizers.is_empty() {
        String::new()
    } else {
        format!(" (removed {})", finalizers.join(", "))
    }
}
