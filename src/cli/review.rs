//! `forcegate review`.

use std::process::ExitCode;

use super::ReviewArgs;

pub fn run(_args: ReviewArgs) -> ExitCode {
    todo!()
}
