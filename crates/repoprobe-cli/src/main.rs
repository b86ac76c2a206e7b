//! The `repoprobe` binary: a thin entry over [`repoprobe_cli::run`], where all logic lives so
//! that tests can call it.
use std::process::ExitCode;

fn main() -> ExitCode {
    fixed_mmap_threshold();
    repoprobe_cli::run(std::env::args_os())
}

/// glibc's allocator raises its mmap threshold each time a large block is freed, so that the
/// vectors of parsed records (one per batch and kind, a few hundred KiB each, allocated on the
/// parsing threads) come from those threads' heaps; freed while the dataset is assembled, they
/// stay there, unusable by the thread that assembles, and a load's peak memory was the parsed
/// records plus the dataset (71 MB for a 73 MB file). A fixed threshold of 64 KiB keeps such
/// blocks mapped on their own, handed back to the system when freed: 59 MB, and no slower.
///
/// And the heaps grow 8 MiB at a time rather than 128 KiB (`M_TOP_PAD`): fewer calls to grow
/// and shrink them while a load allocates tens of megabytes of small records (−2 k page faults,
/// −7 % CPU on the 73 MB file); only what is touched is resident (peak 59 → 61.5 MB).
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets parameters of the allocator; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 10);
        libc::mallopt(libc::M_TOP_PAD, 8 << 20);
    }
}
