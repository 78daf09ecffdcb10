//! The `forcegate` binary: all logic lives in the library.

/// mimalloc: under glibc's allocator a tenth of a decision goes to
/// consolidating free lists once responses pass 1 KiB. The load run's
/// baseline (`bench/src/bin/baseline.rs`) uses the same allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    forcegate::cli::main()
}
