//! `forcegate test`.

use std::process::ExitCode;

use super::TestArgs;

pub fn run(_args: TestArgs) -> ExitCode {
    todo!()
}
