//! What a test does when a program it drives is not installed (an agent CLI, Slurm): on a
//! developer's machine it may skip, saying SKIPPED on stderr (which cargo shows only with
//! `--nocapture`) and adding a line to [`skipped_file`], which `scripts/test.sh` counts at its
//! end so a skip is never silent; under `CI=true`, which `scripts/test.sh` sets, it fails, so
//! that a broken install step shows as a red test instead of a quietly smaller suite.

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
    use std::io::Write;
    let line = format!(
        "{}: {what} ({install})\n",
        std::thread::current().name().unwrap_or("?")
    );
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skipped_file())
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = appended {
        eprintln!(
            "cannot record the skip in {}: {e}",
            skipped_file().display()
        );
    }
    None
}

/// Where each skipped test leaves a line (its name, what was missing): `target/tmp/skipped.txt`.
pub fn skipped_file() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skipped.txt")
}
