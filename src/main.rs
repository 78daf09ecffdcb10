//! The `forcegate` binary: all logic lives in the library.

fn main() -> std::process::ExitCode {
    forcegate::cli::main()
}
