//! `repoprobe-core`: the data model, loading, validation and metrics of RepoProbe, shared by the
//! results site (wasm) and the `repoprobe` CLI so that both print the same numbers.
//!
//! The core takes the world as arguments (bytes, seeds, options): no file system, clock,
//! environment, randomness from the OS or async. Data flows
//! bytes → [`load()`] or [`StreamLoader`] (parse, validate) → [`Dataset`] → [`metrics::score`] →
//! [`ScoreReport`] → [`report`] (text formats). Files may come whole or as streams of chunks;
//! with the `parallel` feature (the CLI's, never the site's) records are parsed on threads of
//! the loader's own while the caller feeds it.

// Pure means safe too: the core is compiled into the site's wasm and parses files from anyone,
// so memory safety rests on the compiler and the crates below, not on our own `unsafe` blocks.
#![forbid(unsafe_code)]

pub mod cited;
pub mod cited_evidence;
pub mod dataset;
pub mod facts;
#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixtures;
pub mod grading;
pub mod issue;
pub mod json_text;
pub mod load;
pub mod model;
pub mod protocol;
pub mod seeded;
pub mod skip;
pub mod sort;
pub mod validate;

/// The text and date helpers, in their own crate below the core (the clients use them without
/// it); here at the paths every crate and the site name them by.
pub use repoprobe_text::{date, text};

pub use dataset::{Dataset, LoadOptions, Loaded, Spans, StreamLoader, load};
pub use issue::{Issue, Severity};
pub use load::{RecordKind, SourceFile, Span};
pub use model::*;

/// Version of the file formats this crate reads and writes (`version` of bundles).
pub const FORMAT_VERSION: u32 = 1;
pub mod metrics;
pub use metrics::{MissingPolicy, ScoreOptions, ScoreReport, Stratum, WeightRule, score};
pub mod report;
#[cfg(feature = "schema")]
pub mod schema;
pub mod synth;
pub mod trajectories;
