//! `repoprobe curate`, the pipeline that makes benchmark questions from GitHub Discussions
//! (paper §3.2, Figure 2), as far as it needs no network: the stages' records, their rules, the
//! curation prompts and the human review. A layer above the core (scoring never needs it) and
//! below the CLI and the site, which both show its tables.
//!
//! Each stage reads the previous stage's JSONL and writes its own ([`record`]): repositories
//! (`curate repos`), threads (`curate harvest`, then `curate filter`), and what it dropped with
//! why ([`Excluded`]). Which threads rely on images ([`images`]), which links to fetch and which
//! addresses never to connect to ([`links`], [`address`]), the funnel of what each stage kept
//! ([`funnel`]), `curate verify`'s rules ([`verify`]), the review's agreement and the release
//! manifest ([`agreement`], [`finalize`]). The prompts of `curate themes`, `classify`, `enhance`
//! and `verify` are in [`protocol`], on the core's `Protocol` trait. Pure, as the core: no I/O,
//! no clock (times come in as arguments or already written in the records), no environment.

pub mod address;
pub mod agreement;
pub mod curation;
pub mod finalize;
pub mod funnel;
pub mod images;
pub mod links;
pub mod pair;
pub mod protocol;
pub mod record;
pub mod tables;
pub mod verify;

pub use curation::{
    ChecklistProvenance, Curation, Enhancement, LinkSource, SkippedLink, SourceThread, StageVerdict,
};
pub use funnel::{Funnel, RepoFunnel, StageCount, StageOutput};
pub use pair::{ClassifiedThread, Pair};
pub use record::{
    Answer, AnsweredRule, Category, Excluded, PinnedCommit, RepoProvenance, Repository, Rule,
    Stage, THEMES, Thread, ThreadProvenance, theme_named,
};
pub use tables::{agreement_table, funnel_table};
