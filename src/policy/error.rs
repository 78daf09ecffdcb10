//! Policy errors carry `file:line:column` so a tired human can jump to them.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// One problem in a policy file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    pub file: PathBuf,
    /// 1-based; 0 when the problem concerns the whole file.
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        if self.line == 0 {
            write!(f, "{file}: {}", self.message)
        } else {
            write!(f, "{file}:{}:{}: {}", self.line, self.column, self.message)
        }
    }
}

/// Why a policy set could not be loaded. Loading is all-or-nothing.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no policy files (*.yaml, *.yml) found", path.display())]
    Empty { path: PathBuf },
    /// Sorted by file and position; never empty.
    #[error("{}", summarize(.0))]
    Invalid(Vec<Finding>),
}

impl PolicyError {
    /// Every finding (an I/O problem is one finding without a position).
    pub fn findings(&self) -> Vec<Finding> {
        match self {
            PolicyError::Invalid(findings) => findings.clone(),
            PolicyError::Io { path, source } => vec![Finding {
                file: path.clone(),
                line: 0,
                column: 0,
                message: source.to_string(),
            }],
            PolicyError::Empty { path } => vec![Finding {
                file: path.clone(),
                line: 0,
                column: 0,
                message: "no policy files (*.yaml, *.yml) found".into(),
            }],
        }
    }
}

fn summarize(findings: &[Finding]) -> String {
    match findings {
        [] => "invalid policy".into(),
        [only] => only.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more problems)", rest.len()),
    }
}

/// Collects findings for one file while compiling it.
#[derive(Debug)]
pub(crate) struct Problems {
    file: PathBuf,
    found: Vec<Finding>,
}

impl Problems {
    pub fn new(file: &Path) -> Self {
        Self {
            file: file.to_path_buf(),
            found: Vec::new(),
        }
    }

    pub fn at(&mut self, line: u32, column: u32, message: impl Into<String>) {
        self.found.push(Finding {
            file: self.file.clone(),
            line,
            column,
            message: message.into(),
        });
    }

    pub fn len(&self) -> usize {
        self.found.len()
    }

    pub fn into_findings(self) -> Vec<Finding> {
        self.found
    }
}

/// Collapse a multi-line library error (regex, pest) into one line.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
