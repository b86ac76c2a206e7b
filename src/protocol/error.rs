//! Why an answer of the worker holds no value: the errors that travel to the page as they are
//! (serde), so that the page can match a variant and says the same words as the worker would.
//! The core's errors inside them (`ScoreError`, `TrajectoryError`, …) travel whole too.

use repoprobe_core::metrics::ScoreError;
use repoprobe_core::metrics::weights::WeightRuleError;
use repoprobe_core::trajectories::{TrajectoryError, TrajectoryKey};
use serde::{Deserialize, Serialize};

/// Why a file, or a byte range of it, could not be read: the browser's reason, or a Range
/// request answered with something else than the range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadError {
    /// The browser could not read the file (or its slice): its own words.
    #[error("{0}")]
    Browser(String),
    /// A file's stream gave something else than bytes.
    #[error("the browser gave something else than bytes")]
    NotBytes,
    /// The browser could not send the Range request (or read its answer): its own words.
    #[error("the browser could not fetch it: {0}")]
    Fetch(String),
    /// The server answered the Range request with HTTP `0`, not 206.
    #[error(
        "the server answered HTTP {0} to a Range request (206 expected): load the page again to download the file whole"
    )]
    NotRange(u16),
    /// The server sent `sent` bytes for a range of `asked`.
    #[error("the server sent {sent} bytes for a range of {asked}")]
    Short { sent: u64, asked: u64 },
}

/// Why a run could not be shown (a page of its steps, a search in it, a side of a comparison):
/// no file holds it, its line could not be read or is not a trajectory, or the index points at
/// another run's line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunError {
    /// No trajectories file given lists the run.
    #[error("no trajectories file given holds this run")]
    NotGiven,
    /// The run was let go (another was opened) before it was served.
    #[error("the run is no longer held: open it again")]
    NotHeld,
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Line(#[from] TrajectoryError),
    /// The line at the index's byte range is run `found`'s.
    #[error(
        "the index points at the line of {} / {} / attempt {}, not of this run: is the index of another version of {file}?",
        found.question_id, found.model, found.attempt
    )]
    OtherRun { found: TrajectoryKey, file: String },
}

/// Why there is no report (nor rows of runs) under a view's options: a weight rule of the
/// address that does not parse, or options the core cannot honour (its words say which).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportError {
    #[error(transparent)]
    Weights(#[from] WeightRuleError),
    #[error(transparent)]
    Score(#[from] ScoreError),
}
