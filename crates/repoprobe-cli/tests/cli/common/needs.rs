//! What a test does when a program it drives is not installed (an agent CLI, Slurm): on a
//! developer's machine it may skip, saying SKIPPED on stderr (which cargo shows only with
//! `--nocapture`); under `CI=true`, which `scripts/test.sh` sets, it fails, so that a broken
//! install step shows as a red test instead of a quietly smaller suite.

/// Whether this run is CI's (`CI=true`), where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `what` is missing and `install` says how to get it: `None` after a SKIPPED line, or a
/// failure under `CI=true`.
pub fn missing<T>(what: &str, install: &str) -> Option<T> {
    assert!(
        !in_ci(),
        "{what}, which this test needs under CI=true: {install}"
    );
    eprintln!("SKIPPED: {what} ({install})");
    None
}
