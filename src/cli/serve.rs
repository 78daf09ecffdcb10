//! `forcegate serve`.

use std::process::ExitCode;

use super::ServeArgs;

pub fn run(_args: ServeArgs) -> ExitCode {
    todo!()
}
