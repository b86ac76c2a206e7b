//! What a run counted, for the progress line and the summary (its own module so that neither
//! needs the other).

use repoprobe_llm::Tokens;

/// Counts of a run, for the summary.
#[derive(Default)]
pub struct Tally {
    pub done: usize,
    pub failed: usize,
    pub http_retries: u64,
    pub reasks: u64,
    pub calls: u64,
    pub tokens: Tokens,
    /// Keys left to the other shards (`--shard`).
    pub other_shards: usize,
    /// Set when SIGTERM stopped the run early.
    pub stopped: Option<crate::runs::stop::Stopped>,
}
