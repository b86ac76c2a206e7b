//! Rule b: the core and the curation are pure — no file system, environment, processes, network
//! or clock, and threads only in code gated by the core's `parallel` feature — in their non-test
//! code.

use crate::source::{PathUse, crates, fail_with};

/// The pure crates: the CLI and the site hand them bytes and times.
const PURE: &[&str] = &["repoprobe-core", "repoprobe-curate", "repoprobe-text"];

/// Paths a pure crate never names, and why.
const FORBIDDEN: &[(&[&str], &str)] = &[
    (
        &["std", "fs"],
        "the file system (the CLI reads files and hands the core bytes)",
    ),
    (
        &["std", "env"],
        "the environment (options come as arguments)",
    ),
    (&["std", "process"], "processes"),
    (&["std", "net"], "the network"),
    (
        &["std", "time", "SystemTime"],
        "the clock (a time comes as an argument)",
    ),
    (&["SystemTime"], "the clock (a time comes as an argument)"),
];

/// Why `path` breaks the rule, if it does.
fn why(path: &PathUse) -> Option<&'static str> {
    if let Some((_, why)) = FORBIDDEN.iter().find(|(p, _)| path.starts_with(p)) {
        return Some(why);
    }
    let s = &path.segments;
    if s.windows(2).any(|w| w[0] == "Instant" && w[1] == "now") {
        return Some("the clock (`Instant::now`; a duration comes as an argument)");
    }
    if path.starts_with(&["std", "thread"]) && !path.parallel {
        return Some(
            "a thread outside the `parallel` feature (gate it with #[cfg(feature = \"parallel\")])",
        );
    }
    None
}

#[test]
fn the_core_reads_no_files_env_or_clock_and_spawns_threads_only_with_parallel() {
    let pure: Vec<_> = crates()
        .into_iter()
        .filter(|c| PURE.contains(&c.name.as_str()))
        .collect();
    assert_eq!(pure.len(), PURE.len(), "crates {PURE:?}");
    let mut breaches = Vec::new();
    for f in pure.iter().flat_map(|c| &c.files) {
        for p in &f.paths {
            if let Some(why) = why(p) {
                breaches.push(format!("{}:{}: `{}`: {why}", f.path, p.line, p.text()));
            }
        }
    }
    fail_with(
        "purity (crates/repoprobe-core/src and crates/repoprobe-curate/src, non-test code: no std::fs, std::env, \
         std::process, std::net, SystemTime or Instant::now; std::thread only under \
         #[cfg(feature = \"parallel\")])",
        "take what the code needs as an argument (bytes, a time, an option) and do the I/O in \
         the CLI or the site; gate threads with the `parallel` feature",
        &breaches,
    );
}

#[test]
fn a_thread_is_fine_only_under_the_parallel_feature() {
    let at = |parallel| PathUse {
        segments: vec!["std".into(), "thread".into(), "spawn".into()],
        line: 1,
        parallel,
    };
    assert!(why(&at(true)).is_none());
    assert!(why(&at(false)).is_some());
}
