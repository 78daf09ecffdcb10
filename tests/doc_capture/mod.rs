//! Output captured from real runs, and the documentation blocks that show it.
//!
//! The e2e suite runs the on-call commands against the real API server and
//! writes what they printed to `<CARGO_TARGET_TMPDIR>/oncall-capture/<name>.txt`
//! (first line `$ <command>`). In `docs/operations.md` a block marked
//! `<!-- captured: <name> -->` must show that output. UIDs, IPs, times and
//! ages differ from run to run, so both sides are normalized before they are
//! compared; with `FORCEGATE_UPDATE_DOCS=1` the e2e run rewrites the blocks
//! from its captures instead.

#![allow(dead_code)] // each test binary uses part of it

use std::path::PathBuf;
use std::sync::Mutex;

use regex::Regex;

/// The e2e tests that capture may run in parallel; the doc is one file.
static DOC: Mutex<()> = Mutex::new(());

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("oncall-capture")
}

pub fn doc() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/operations.md")
}

/// Save what `command` printed under `name`.
pub fn write(name: &str, command: &str, output: &str) {
    let dir = dir();
    std::fs::create_dir_all(&dir).expect("capture directory");
    let text = format!("$ {command}\n{}", output.trim_end());
    std::fs::write(dir.join(format!("{name}.txt")), text).expect("write capture");
}

/// One marked block of the doc: the lines between its fences.
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    pub name: String,
    /// Line index of the first content line and one past the last.
    pub lines: (usize, usize),
    pub content: String,
}

/// Every `<!-- captured: NAME -->` block; errors name a malformed one.
pub fn blocks(doc: &str) -> Result<Vec<Block>, String> {
    let marker = Regex::new(r"^<!-- captured: ([a-z0-9-]+) -->$").expect("regex");
    let lines: Vec<&str> = doc.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = marker.captures(line).map(|c| c[1].to_owned()) else {
            continue;
        };
        if !lines.get(i + 1).is_some_and(|l| l.starts_with("```")) {
            return Err(format!(
                "block {name}: the marker must be followed by a ``` fence"
            ));
        }
        let start = i + 2;
        let end = (start..lines.len())
            .find(|j| lines[*j].starts_with("```"))
            .ok_or_else(|| format!("block {name}: no closing fence"))?;
        let content = lines[start..end].join("\n");
        if !content.starts_with("$ kubectl forcegate ") {
            return Err(format!(
                "block {name}: must start with the command, `$ kubectl forcegate ...`"
            ));
        }
        found.push(Block {
            name,
            lines: (start, end),
            content,
        });
    }
    Ok(found)
}

/// Run-to-run differences blanked: UIDs, IPs, timestamps, ages, counts of
/// what else runs in the cluster, and the column padding that follows the
/// width of ages.
pub fn normalize(text: &str) -> String {
    let rules = [
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "<uid>",
        ),
        (r"csi-[0-9a-f]{64}", "<attachment>"),
        (r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>"),
        (r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b", "<ip>"),
        (r"\b\d+[smhdy](\d+[smhd])?\b", "<age>"),
        // How many workloads `stuck` searched depends on what else runs.
        (
            r"\b\d+ (Deployment|StatefulSet|DaemonSet|Pod|Lease)s?\b",
            "<n> $1",
        ),
        (r"[ \t]+", " "),
    ];
    let mut text = text.trim_end().to_owned();
    for (pattern, replacement) in rules {
        let regex = Regex::new(pattern).expect("regex");
        text = regex.replace_all(&text, replacement).into_owned();
    }
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compare the doc's block `name` with its capture, or rewrite it from the
/// capture when `FORCEGATE_UPDATE_DOCS=1`.
pub fn check(name: &str) -> Result<(), String> {
    let _one = DOC.lock().unwrap_or_else(|p| p.into_inner());
    let captured = std::fs::read_to_string(dir().join(format!("{name}.txt")))
        .map_err(|e| format!("no capture {name}: {e}"))?;
    let path = doc();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let all = blocks(&text)?;
    let block = (all.iter())
        .find(|b| b.name == name)
        .ok_or_else(|| format!("docs/operations.md has no block `<!-- captured: {name} -->`"))?;
    if std::env::var_os("FORCEGATE_UPDATE_DOCS").is_some_and(|v| v == "1") {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.splice(block.lines.0..block.lines.1, captured.lines());
        let mut updated = lines.join("\n");
        updated.push('\n');
        return std::fs::write(&path, updated).map_err(|e| e.to_string());
    }
    let (want, got) = (normalize(&block.content), normalize(&captured));
    if want == got {
        return Ok(());
    }
    let differ = (want.lines().zip(got.lines()))
        .find(|(a, b)| a != b)
        .map(|(a, b)| format!("first difference:\n  doc:     {a}\n  capture: {b}"))
        .unwrap_or_else(|| "one is a prefix of the other".into());
    Err(format!(
        "docs/operations.md block `{name}` no longer shows what the command prints ({differ}); \
         rerun the e2e test with FORCEGATE_UPDATE_DOCS=1 to refresh it"
    ))
}
