//! The `kubectl-forcegate` plugin binary (`kubectl forcegate ...`): all logic lives in the library.

fn main() -> std::process::ExitCode {
    forcegate::cli::main()
}
