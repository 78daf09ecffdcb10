//! The `forcegate` binary: all logic lives in the library.

/// mimalloc (see `forcegate::alloc`); the bench baseline
/// (`examples/baseline.rs`) uses the same allocator.
#[global_allocator]
static ALLOCATOR: forcegate::alloc::MiMalloc = forcegate::alloc::MiMalloc;

fn main() -> std::process::ExitCode {
    forcegate::cli::main()
}
