//! What SIGTERM does to a long run: a cluster's way of saying "stop now, you will be run again"
//! (Slurm preemption or `scancel --signal=TERM`, a Kubernetes eviction). The run starts no new
//! key, gives the keys in flight `--grace-s` to finish and be written, abandons the rest
//! (their processes killed, nothing of theirs written), and exits with [`crate::Exit::Requeue`];
//! the journals are whole (a record is written in one piece between two awaits), so the task
//! run again skips every key written and does the others.

/// How a run of keys ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ended {
    /// Set when SIGTERM stopped the run before every key was done.
    pub stopped: Option<Stopped>,
}

/// What a stopped run left for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Keys in flight when the grace period ran out (abandoned, nothing written).
    pub abandoned: usize,
    /// Keys not started.
    pub not_started: usize,
}

impl Stopped {
    /// The line the summary ends with.
    pub fn line(&self) -> String {
        format!(
            "stopped by SIGTERM: {} key(s) not started, {} abandoned in flight (nothing written \
             for them); exit {} asks for this task to be run again, which resumes here",
            self.not_started,
            self.abandoned,
            crate::Exit::Requeue as u8
        )
    }
}

/// The stream of SIGTERMs, once installed: from then on SIGTERM no longer ends the process
/// at once (the run loop decides).
pub fn terminate() -> std::io::Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
}
