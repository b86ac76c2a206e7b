//! The records of `repoprobe curate`, the pipeline that makes benchmark questions from GitHub
//! Discussions (paper §3.2, Figure 2), and the stages' rules that need no network: which
//! threads rely on images ([`images`]), the funnel of what each stage kept ([`funnel`]), the
//! UTC dates of the search's slices ([`crate::date`]), `curate verify`'s rules ([`verify`]: links,
//! grounding, the candidate record).
//!
//! Each stage reads the previous stage's JSONL and writes its own ([`record`]): repositories
//! (`curate repos`), threads (`curate harvest`, then `curate filter`), and what it dropped with
//! why ([`Excluded`]). Pure, as the rest of the core: no I/O, no clock (times come in as
//! arguments or already written in the records), no environment.

pub mod address;
pub mod agreement;
pub mod curation;
pub mod finalize;
pub mod funnel;
pub mod images;
pub mod links;
pub mod pair;
pub mod record;
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
