//! `stuck` as a table, then one block per object: findings and advice.

use std::fmt::Write as _;

use super::{Style, age, table};
use crate::oncall::stuck::{Level, Report, Stuck};

fn level_text(level: Level) -> &'static str {
    match level {
        Level::Wait => "wait",
        Level::Act => "safe step",
        Level::Human => "needs a human",
    }
}

fn paint(style: Style, level: Level, text: &str) -> String {
    match level {
        Level::Wait => style.green(text),
        Level::Act => style.yellow(text),
        Level::Human => style.red(text),
    }
}

pub fn report(report: &Report, style: Style) -> String {
    let mut out = String::new();
    let threshold = age(i64::try_from(report.older_than_seconds).unwrap_or(i64::MAX));
    if report.stuck.is_empty() {
        let _ = writeln!(out, "Nothing is stuck Terminating for {threshold} or more.");
    } else {
        let n = report.stuck.len();
        let _ = writeln!(
            out,
            "{n} object{} stuck Terminating for {threshold} or more\n",
            if n == 1 { "" } else { "s" }
        );
        let rows: Vec<Vec<String>> = (report.stuck.iter())
            .map(|s| {
                vec![
                    s.object.namespace.clone().unwrap_or_else(|| "-".into()),
                    s.object.group_kind.clone(),
                    s.object.name.clone(),
                    age(s.age_seconds),
                    finalizers(s),
                    level_text(s.level).to_owned(),
                ]
            })
            .collect();
        out.push_str(&table(
            &["NAMESPACE", "KIND", "NAME", "AGE", "FINALIZERS", "NEXT"],
            &rows,
        ));
        for stuck in &report.stuck {
            block(stuck, style, &mut out);
        }
    }
    if !report.gaps.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("Could not read (diagnoses that needed it say so)")
        );
        for gap in &report.gaps {
            let _ = writeln!(out, "  {}: {}", gap.what, gap.reason);
        }
    }
    out
}

fn finalizers(stuck: &Stuck) -> String {
    let all: Vec<&str> = (stuck.object.finalizers.iter())
        .chain(&stuck.object.spec_finalizers)
        .map(String::as_str)
        .collect();
    if all.is_empty() {
        "-".into()
    } else {
        all.join(",")
    }
}

fn block(stuck: &Stuck, style: Style, out: &mut String) {
    let o = &stuck.object;
    let subject = match &o.namespace {
        Some(ns) => format!("{} {ns}/{}", o.group_kind, o.name),
        None => format!("{} {}", o.group_kind, o.name),
    };
    let _ = writeln!(
        out,
        "\n{}  (Terminating {}; finalizers: {})",
        style.bold(&subject),
        age(stuck.age_seconds),
        finalizers(stuck)
    );
    for finding in &stuck.findings {
        let _ = writeln!(out, "  - {}", finding.text);
    }
    for advice in &stuck.advice {
        let label = paint(
            style,
            advice.level,
            &format!("{}:", level_text(advice.level)),
        );
        let _ = writeln!(out, "  {label} {}", advice.text);
        for command in &advice.commands {
            let _ = writeln!(out, "      $ {command}");
        }
    }
}
