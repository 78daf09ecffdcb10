//! Output for humans (tables and reports; colour only on a terminal) and
//! for scripts (`-o json|yaml`: the cores' own serializable results).

use std::io::IsTerminal;

use serde::Serialize;

use super::OncallError;
use crate::cleanup::{ChecklistItem, ItemState};

pub mod explain;
pub mod records;
pub mod stuck;

/// How to print a result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
    Yaml,
}

/// ANSI colour, on only when standard output is a terminal and `NO_COLOR`
/// is unset or empty (<https://no-color.org>).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn detect() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn red(self, text: &str) -> String {
        self.paint("1;31", text)
    }
    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
}

/// One checklist item: `[state] name: message`, then its command. Manual
/// items are listed under their own heading, without the state.
pub fn checklist_item(item: &ChecklistItem, style: Style, out: &mut String) {
    let state = match item.state {
        ItemState::Ok => Some(style.green("ok")),
        ItemState::Pending => Some(style.yellow("pending")),
        ItemState::Failed => Some(style.red("failed")),
        ItemState::Manual => None,
    };
    let line = match state {
        Some(state) => format!("  [{state}] {}: {}\n", item.name, item.message),
        None => format!("  {}: {}\n", item.name, item.message),
    };
    out.push_str(&line);
    if let Some(command) = &item.command {
        out.push_str(&format!("      $ {command}\n"));
    }
}

/// `value` as JSON (pretty, one document) or YAML (one document).
pub fn structured(value: &impl Serialize, format: Format) -> Result<String, OncallError> {
    let failed = |e: String| OncallError::Input(format!("cannot encode the result: {e}"));
    match format {
        Format::Yaml => serde_saphyr::to_string(value).map_err(|e| failed(e.to_string())),
        _ => serde_json::to_string_pretty(value)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| failed(e.to_string())),
    }
}

/// A kubectl-style table: columns padded to their widest cell, three
/// spaces apart, the last one unpadded.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
        let last = row.len().saturating_sub(1);
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i < last {
                let pad = widths.get(i).copied().unwrap_or(0) - cell.chars().count();
                out.push_str(&" ".repeat(pad + 3));
            }
        }
        out.push('\n');
    }
    out
}

/// A duration in seconds the way kubectl prints ages (`45s`, `5m3s`, `3h`,
/// `2d4h`); negative durations (a pod still in its grace period) print as `0s`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    let (minute, hour, day, year) = (60, 3600, 86_400, 365 * 86_400);
    let two = |big: i64, unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    match s {
        s if s < 2 * minute => format!("{s}s"),
        s if s < 10 * minute => two(s / minute, "m", s % minute, "s"),
        s if s < 3 * hour => format!("{}m", s / minute),
        s if s < 8 * hour => two(s / hour, "h", (s % hour) / minute, "m"),
        s if s < 2 * day => format!("{}h", s / hour),
        s if s < 8 * day => two(s / day, "d", (s % day) / hour, "h"),
        s if s < 2 * year => format!("{}d", s / day),
        s if s < 8 * year => two(s / year, "y", (s % year) / day, "d"),
        s => format!("{}y", s / year),
    }
}

#[cfg(test)]
mod tests;
