//! Suite results as text (humans), JSON (tools) and JUnit XML (CI systems).

use std::fmt::Write as _;

use super::Report;

/// One line per case, details under failures, a summary at the end.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    for suite in &report.suites {
        let _ = writeln!(out, "{} ({})", suite.file.display(), suite.name);
        if let Some(err) = &suite.error {
            let _ = writeln!(out, "  ERROR {err}");
            continue;
        }
        for case in &suite.cases {
            if case.passed() {
                let _ = writeln!(out, "  ok    {}", case.name);
                continue;
            }
            let _ = writeln!(
                out,
                "  FAIL  {} ({}:{})",
                case.name,
                suite.file.display(),
                case.line
            );
            for failure in &case.failures {
                let _ = writeln!(out, "        {failure}");
            }
            if let Some(o) = &case.observed {
                let _ = writeln!(
                    out,
                    "        observed: intent={} allowed={} denying=[{}] recorded={} breakGlass={}",
                    o.intent,
                    o.allowed,
                    o.denying_policies.join(", "),
                    o.recorded,
                    o.break_glass
                );
            }
        }
    }
    let passed = report.cases() - report.failed();
    let _ = writeln!(
        out,
        "{} suites, {} cases: {passed} passed, {} failed{}",
        report.suites.len(),
        report.cases(),
        report.failed(),
        match report.errors() {
            0 => String::new(),
            n => format!(", {n} suites could not run"),
        }
    );
    out
}

/// The whole report as one JSON document.
pub fn json(report: &Report) -> String {
    let summary = serde_json::json!({
        "suites": report.suites,
        "cases": report.cases(),
        "failed": report.failed(),
        "errors": report.errors(),
        "ok": report.ok(),
    });
    serde_json::to_string_pretty(&summary).unwrap_or_default()
}

/// JUnit XML as Jenkins, GitLab and GitHub test reporters read it.
pub fn junit(report: &Report) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"forcegate\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        report.cases(),
        report.failed(),
        report.errors()
    );
    for suite in &report.suites {
        let time: f64 = suite.cases.iter().map(|c| c.seconds).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" file=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{time:.6}\">",
            escape(&suite.name),
            escape(&suite.file.display().to_string()),
            suite.cases.len(),
            suite.failed(),
            usize::from(suite.error.is_some())
        );
        if let Some(err) = &suite.error {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{0}\" name=\"load\"><error message=\"{1}\">{1}</error></testcase>",
                escape(&suite.name),
                escape(err)
            );
        }
        for case in &suite.cases {
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\" time=\"{:.6}\"",
                escape(&suite.name),
                escape(&case.name),
                escape(&suite.file.display().to_string()),
                case.line,
                case.seconds
            );
            if case.passed() {
                out.push_str("/>\n");
            } else {
                let details = case.failures.join("\n");
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                    escape(case.failures.first().map_or("", String::as_str)),
                    escape(&details)
                );
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// XML-escape text and attribute values; drop characters XML 1.0 forbids.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
