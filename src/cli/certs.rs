//! `forcegate certs`.

use std::process::ExitCode;

use super::CertsArgs;

pub fn run(_args: CertsArgs) -> ExitCode {
    todo!()
}
