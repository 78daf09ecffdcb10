//! `forcegate lint`.

use std::process::ExitCode;

use super::LintArgs;

pub fn run(_args: LintArgs) -> ExitCode {
    todo!()
}
