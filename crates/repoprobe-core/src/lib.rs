//! `repoprobe-core`: the data model, loading, validation and metrics of RepoProbe, shared by the
//! results site (wasm) and the `repoprobe` CLI so that both print the same numbers.
//!
//! The core takes the world as arguments (bytes, seeds, options): no file system, clock,
//! environment, randomness from the OS or async. Data flows
//! bytes → [`load()`] (parse, validate) → [`Dataset`] → [`metrics::score`] → [`ScoreReport`] →
//! [`report`] (text formats).

pub mod dataset;
#[cfg(test)]
mod fixtures;
pub mod issue;
pub mod load;
pub mod model;
pub mod protocol;
pub mod validate;

pub use dataset::{Dataset, LoadOptions, Loaded, Spans, load};
pub use issue::{Issue, Severity};
pub use load::{RecordKind, SourceFile, Span, StreamLoader};
pub use model::*;

/// Version of the file formats this crate reads and writes (`version` of bundles).
pub const FORMAT_VERSION: u32 = 1;
pub mod metrics;
pub use metrics::{MissingPolicy, ScoreOptions, ScoreReport, Stratum, WeightRule, score};
pub mod report;
#[cfg(feature = "schema")]
pub mod schema;
pub mod synth;
