//! The one way the tests wait for something another process does (a file written, a request
//! received, a process gone, a Slurm state): polled, with a deadline, failing with what it
//! waited for. The deadlines are generous: they turn a hang into a failure and never time the
//! product.

use std::time::{Duration, Instant};

/// Polls `ok` every 20 ms until it holds; fails after `deadline`, naming `what`.
pub fn until(what: &str, deadline: Duration, mut ok: impl FnMut() -> bool) {
    every(Duration::from_millis(20), what, deadline, || {
        if ok() { Ok(()) } else { Err(String::new()) }
    })
}

/// Polls `check` every `period` until it is `Ok`; fails after `deadline`, naming `what` and
/// what the last `Err` said (what was still in the way).
pub fn every(
    period: Duration,
    what: &str,
    deadline: Duration,
    mut check: impl FnMut() -> Result<(), String>,
) {
    let start = Instant::now();
    while let Err(why) = check() {
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}{}{why}",
            if why.is_empty() { "" } else { ": " }
        );
        std::thread::sleep(period);
    }
}
