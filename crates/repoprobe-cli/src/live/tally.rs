//! What a run counted, for the progress line and the summary (its own module so that neither
//! needs the other).

use repoprobe_core::model::failure::Cause;
use repoprobe_llm::Tokens;
use std::collections::BTreeMap;

/// Counts of a run, for the summary.
#[derive(Default)]
pub struct Tally {
    pub done: usize,
    /// Keys with a failure record: those that could not run included.
    pub failed: usize,
    /// Of `failed`, the keys that could not run, by cause.
    pub could_not_run: BTreeMap<Cause, usize>,
    pub http_retries: u64,
    pub reasks: u64,
    pub calls: u64,
    pub tokens: Tokens,
    /// Calls whose reply reported no usage (not in `tokens`).
    pub without_usage: u64,
    /// Keys left to the other shards (`--shard`).
    pub other_shards: usize,
    /// Set when SIGTERM stopped the run early.
    pub stopped: Option<crate::run_files::stop::Stopped>,
}
