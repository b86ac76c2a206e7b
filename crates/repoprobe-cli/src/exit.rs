//! The documented exit codes of every `repoprobe` command.
use std::process::ExitCode;

/// What a command's exit status means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything was valid and the command did what was asked.
    Ok = 0,
    /// Invalid records were found (reported, left out); the rest was processed.
    InvalidRecords = 1,
    /// Input could not be used at all (unreadable, not JSON, unknown shape), or a usage error.
    Unusable = 2,
    /// A long run stopped by SIGTERM (preemption, `scancel --signal=TERM`, an eviction) before
    /// every key was done: run the same command again (requeue the task) and it resumes.
    /// 75 is `EX_TEMPFAIL` of `sysexits.h`: "try again later".
    Requeue = 75,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

impl Exit {
    /// The exit status a load deserves. Warnings (a part of a record ignored, the record
    /// kept) are printed but do not change it: every record was counted.
    pub fn of(loaded: &repoprobe_core::Loaded) -> Exit {
        if loaded.has_unusable_input() {
            Exit::Unusable
        } else if loaded
            .issues
            .iter()
            .any(|i| i.severity != repoprobe_core::Severity::Warning)
        {
            Exit::InvalidRecords
        } else {
            Exit::Ok
        }
    }
}
