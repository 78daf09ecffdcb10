//! `forcegate lint`: schema and semantic checks with `file:line:col` findings.
//!
//! Lint checks exactly what loading checks (unknown fields, facts, intents,
//! bad JSONPath, bad regular expressions, type mismatches, templates,
//! duplicate names), but reports every problem instead of the first. Exit 0:
//! clean; 1: findings; 2: usage (a path that does not exist, no files).

use std::process::ExitCode;

use super::{LintArgs, Output};
use crate::policy::load;

pub fn run(args: LintArgs) -> ExitCode {
    let files = match load::expand(&args.paths) {
        Ok(files) if !files.is_empty() => files,
        Ok(_) => {
            eprintln!("forcegate lint: no policy files (*.yaml, *.yml) in the given paths");
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("forcegate lint: {err}");
            return ExitCode::from(2);
        }
    };
    let (policies, findings) = match load::check_files(&files) {
        Ok(checked) => checked,
        Err(err) => {
            eprintln!("forcegate lint: {err}");
            return ExitCode::from(2);
        }
    };
    match args.output {
        Output::Json | Output::Junit | Output::Yaml => {
            let doc = serde_json::json!({
                "files": files,
                "policies": policies.iter().map(|p| &*p.name).collect::<Vec<_>>(),
                "findings": findings,
            });
            match args.output {
                Output::Yaml => print!("{}", serde_saphyr::to_string(&doc).unwrap_or_default()),
                _ => println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default()),
            }
        }
        Output::Text => {
            for finding in &findings {
                println!("{finding}");
            }
            eprintln!(
                "{} files, {} policies, {} problems",
                files.len(),
                policies.len(),
                findings.len()
            );
        }
    }
    if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
