//! The `forcegate` binary: all logic lives in the library.

/// mimalloc: glibc's allocator spent a tenth of a decision consolidating
/// its free lists once responses grew past 1 KiB. The bench baseline
/// (`examples/baseline.rs`) uses the same allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    forcegate::cli::main()
}
