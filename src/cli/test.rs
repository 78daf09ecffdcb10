//! `forcegate test`: run policy test suites, the pull-request check.
//!
//! Exit 0: every case passed; 1: some case failed; 2: bad input or usage
//! (no suites found, a suite or the policies it names cannot be loaded).

use std::process::ExitCode;

use super::{Output, TestArgs};
use crate::testsuite::{self, report};

pub fn run(args: TestArgs) -> ExitCode {
    let report = super::one_shot_runtime()
        .and_then(|runtime| runtime.block_on(testsuite::run_paths(&args.paths)));
    let report = match report {
        Ok(report) => report,
        Err(reason) => {
            eprintln!("forcegate test: {reason}");
            return ExitCode::from(2);
        }
    };
    match args.output {
        Output::Text => print!("{}", report::text(&report)),
        Output::Json => println!("{}", report::json(&report)),
        Output::Yaml => {
            let value: serde_json::Value =
                serde_json::from_str(&report::json(&report)).unwrap_or_default();
            print!("{}", serde_saphyr::to_string(&value).unwrap_or_default());
        }
        Output::Junit => print!("{}", report::junit(&report)),
    }
    for err in report.suites.iter().filter_map(|s| s.error.as_ref()) {
        eprintln!("forcegate test: {err}");
    }
    if report.errors() > 0 {
        ExitCode::from(2)
    } else if report.failed() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
