//! The `curation` block every question made by `repoprobe curate` carries from `curate enhance`
//! on (docs/curate.md#the-curation-block): where the question came from (the discussion, its
//! dates, the pinned commit) and what each stage decided of it. It rides through
//! `make-checklist` as an extra field and ends in the candidates file `curate verify` writes,
//! beside a valid benchmark question, so a reviewer (and the release) can follow every question
//! back to its thread and every verdict to its stage.
//!
//! Types only; the stages fill them.

use crate::record::{PinnedCommit, Thread};
use serde::{Deserialize, Serialize};

/// A question's curation block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curation {
    /// The discussion it was made from.
    pub source: SourceThread,
    /// The commit the question is asked at (also the question's `repo.commit`).
    pub commit: PinnedCommit,
    /// `curate classify`'s verdict.
    pub classify: StageVerdict,
    /// `curate enhance`'s record: the links found and what became of them.
    pub enhance: Enhancement,
    /// `make-checklist`'s provenance, moved here from the question's top level by
    /// `curate verify` (a candidate is a plain benchmark question plus this block).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub checklist: Option<ChecklistProvenance>,
    /// `curate verify`'s verdict (absent until it ran).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub verify: Option<StageVerdict>,
}

/// The discussion a question was made from, as harvested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceThread {
    /// `owner/name#number`, the thread's key in the stages' files.
    pub key: String,
    pub url: String,
    /// The discussion category's name (`Q&A`, `Help`, …).
    pub category: String,
    pub title: String,
    pub created_at: String,
    /// When the accepted answer was chosen.
    pub answer_chosen_at: String,
    pub answer_url: String,
    pub answer_author_association: String,
    pub upvotes: i64,
    pub harvested_at: String,
    /// The GraphQL endpoint and the API's node ids.
    pub api_url: String,
    pub discussion_id: String,
    pub answer_id: String,
}

impl SourceThread {
    /// The source block of a harvested thread.
    pub fn of(t: &Thread) -> SourceThread {
        SourceThread {
            key: t.key.clone(),
            url: t.url.clone(),
            category: t.category.clone(),
            title: t.title.clone(),
            created_at: t.created_at.clone(),
            answer_chosen_at: t.answer.chosen_at.clone(),
            answer_url: t.answer.url.clone(),
            answer_author_association: t.answer.author_association.clone(),
            upvotes: t.upvotes,
            harvested_at: t.provenance.harvested_at.clone(),
            api_url: t.provenance.api_url.clone(),
            discussion_id: t.provenance.discussion_id.clone(),
            answer_id: t.provenance.answer_id.clone(),
        }
    }
}

/// What an LLM stage decided: the model, the prompt, the rationale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageVerdict {
    pub prompt_version: String,
    pub model: String,
    /// Kept (`true`) or dropped.
    pub passed: bool,
    /// The model's reasons, as it wrote them.
    pub rationale: String,
}

/// How a question's checklist was written: `make-checklist`'s provenance fields, as it wrote
/// them (it names no model: the run's manifest does).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChecklistProvenance {
    pub prompt_version: String,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub structured: Option<String>,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub usage: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub raw_reply: Option<String>,
}

/// What `curate enhance` did with a thread's links.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Enhancement {
    /// The question and answer as harvested, before the summaries were merged in (equal to
    /// the question's when no page was merged).
    pub original_question: String,
    pub original_answer: String,
    /// Every external link found, in order of first appearance, fetched or not.
    pub sources: Vec<LinkSource>,
    /// Links left out before any fetch: internal references (loopback, private, link-local
    /// addresses, the repository's own pages), with why.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::empty")]
    pub skipped: Vec<SkippedLink>,
    /// The prompt of the merge (absent when nothing was fetched and nothing asked).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub prompt_version: Option<String>,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub model: Option<String>,
}

/// An external link of a thread, and its page as fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSource {
    /// The link as written in the thread.
    pub url: String,
    /// The address the page was read from after redirects (absent: not fetched).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub final_url: Option<String>,
    /// When it was fetched (RFC 3339, UTC).
    pub fetched_at: String,
    /// The HTTP status of the last response (absent: no response).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub content_type: Option<String>,
    /// Bytes of the body read (at most the fetcher's cap).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub bytes: Option<u64>,
    /// sha256 of the body read, lowercase hex.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub sha256: Option<String>,
    /// Why no page text came of it (refused address, too large, not text, HTTP error, …).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub error: Option<String>,
    /// The model's judgement of the page: relevant to the repository and the thread.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub relevant: Option<bool>,
    /// The model's summary of what the page adds (absent when not relevant).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub summary: Option<String>,
}

impl LinkSource {
    /// A page that was read: a 2xx response with a text body.
    pub fn resolved(&self) -> bool {
        self.error.is_none() && self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// A link not fetched, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedLink {
    pub url: String,
    pub reason: String,
}
