//! The lines `repoprobe curate` writes, one type per kind (docs/curate.md#records): a
//! [`Repository`] kept by `curate repos`, a [`Thread`] harvested (and passed on by
//! `curate filter`), an [`Excluded`] record for whatever a stage dropped. Types only: the stages
//! decide, the funnel counts.

use serde::{Deserialize, Serialize};

/// The stages of `repoprobe curate`, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Repos,
    Harvest,
    Filter,
    Classify,
    Enhance,
    Verify,
    /// `curate finalize`: the human review.
    Review,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Repos => "repos",
            Stage::Harvest => "harvest",
            Stage::Filter => "filter",
            Stage::Classify => "classify",
            Stage::Enhance => "enhance",
            Stage::Verify => "verify",
            Stage::Review => "review",
        }
    }
}

/// Why a record was dropped, in a word the funnel groups by; the [`Excluded::reason`] says the
/// rest (numbers, names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// `curate repos`: the repository has Discussions turned off.
    NoDiscussions,
    /// `curate repos`: no answerable category of the names asked for.
    NoCategory,
    /// `curate repos`: such categories, but fewer answered threads than asked for.
    TooFewAnswered,
    /// `curate repos --repo`: the API does not know the repository (or the token cannot see it).
    NotFound,
    /// `curate harvest`: listed as answered, but the accepted answer is not there (deleted, or
    /// hidden from the token).
    NoAnswer,
    /// `curate harvest`: the default branch has no commit at the time the answer was chosen.
    NoCommit,
    /// `curate filter`: the question or the accepted answer relies on images.
    Images,
    /// `curate classify`: the thread is not about understanding the repository's code (a
    /// feature request, an installation problem, a question about something else).
    NotCodeUnderstanding,
    /// `curate verify`: the question depends on external pages that do not resolve or do not
    /// matter (the pair would not stand on the repository alone).
    LinksUnresolved,
    /// `curate verify`: a checklist item could not be grounded in the repository's code at the
    /// pinned commit.
    Unanswerable,
    /// `curate finalize`: the adjudicator rejected it, or (without one) every reviewer did.
    Rejected,
    /// `curate finalize`: reviewed, but the reviewers disagree (on the decision or a
    /// criterion) and no adjudicator decided.
    Unresolved,
    /// `curate finalize`: nobody reviewed it.
    Unreviewed,
    /// A rule of a later version: read, counted under its own name.
    #[serde(other)]
    Other,
}

/// One line of a stage's `excluded` journal: what was dropped, where and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excluded {
    pub stage: Stage,
    /// The record's key: `owner/name` for a repository, `owner/name#number` for a thread.
    pub key: String,
    /// The repository it belongs to (the funnel's rows).
    pub repo: String,
    pub rule: Rule,
    /// A sentence a reader can act on.
    pub reason: String,
}

/// A discussion category of a repository, as `curate repos` saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Category {
    /// The API's node id (`discussions(categoryId:)` takes it).
    pub id: String,
    pub name: String,
    /// Whether threads of this category can have an accepted answer (`isAnswerable`).
    pub answerable: bool,
    /// Answered threads (`discussions(categoryId:, answered: true) { totalCount }`); counted
    /// only for the categories named by `--category` that are answerable.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub answered: Option<u64>,
    /// Harvested: named, answerable and with at least `--min-answered` answered threads.
    pub kept: bool,
}

/// Where a repository record came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoProvenance {
    /// `search` (the slice's query is in `query`) or `list` (`--repo`).
    pub source: String,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub query: Option<String>,
    /// The GraphQL endpoint asked.
    pub api_url: String,
    /// When it was asked (RFC 3339, UTC).
    pub seen_at: String,
}

/// The eight repository themes of the paper's Table 4, as it writes them.
pub const THEMES: [&str; 8] = [
    "LLM Framework",
    "Cloud DevOps",
    "Developer SDK",
    "Editor UI",
    "Monitoring Tools",
    "Desktop Apps",
    "Data Processing",
    "Security",
];

/// The theme of [`THEMES`] that `name` spells, case and spacing aside (`cloud-devops`).
pub fn theme_named(name: &str) -> Option<&'static str> {
    let key = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let wanted = key(name);
    THEMES.into_iter().find(|t| key(t) == wanted)
}

/// How `--min-answered` is read: the answered threads of the named categories counted
/// together (the paper's sentence, §3.2: "with 'Q&A' or 'Help' categories and at least ten
/// discussions explicitly marked as answered"), or each category on its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnsweredRule {
    Together,
    /// The records written before the rule was recorded were decided per category.
    #[default]
    Each,
}

impl AnsweredRule {
    pub fn as_str(self) -> &'static str {
        match self {
            AnsweredRule::Together => "together",
            AnsweredRule::Each => "each",
        }
    }
}

/// A repository kept by `curate repos`: the categories to harvest are those with `kept`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repository {
    /// `owner/name`, the key.
    pub repo: String,
    /// The API's node id.
    pub id: String,
    pub url: String,
    pub stars: u64,
    /// RFC 3339, as the API wrote it.
    pub created_at: String,
    /// `None`: an empty repository.
    pub default_branch: Option<String>,
    pub categories: Vec<Category>,
    /// How the answered threads were counted.
    #[serde(default)]
    pub answered_rule: AnsweredRule,
    /// The primary language GitHub gives (`primaryLanguage`); `None` when it gives none.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub language: Option<String>,
    /// One of [`THEMES`]: set by the user (`curate repos --theme`) or by a model (`curate
    /// themes`, then `theme_by` says which); `None` when not set.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub theme: Option<String>,
    /// The model's verdict that set `theme` (absent when the user set it).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub theme_by: Option<crate::StageVerdict>,
    /// GitHub's description and topics (what `curate themes` reads).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::empty")]
    pub topics: Vec<String>,
    /// Why it was kept, in a sentence (the criteria it met).
    pub kept_because: String,
    pub provenance: RepoProvenance,
}

impl Repository {
    /// The categories to harvest.
    pub fn kept_categories(&self) -> impl Iterator<Item = &Category> {
        self.categories.iter().filter(|c| c.kept)
    }
}

/// A thread's accepted answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub body: String,
    /// `None`: the author's account is gone (GitHub's "ghost").
    pub author: Option<String>,
    /// The API's `authorAssociation` (`OWNER`, `MEMBER`, `CONTRIBUTOR`, `NONE`, …).
    pub author_association: String,
    /// When it was marked as the answer (`answerChosenAt`, RFC 3339).
    pub chosen_at: String,
    pub url: String,
}

/// The commit a thread is pinned to: the default branch's last commit at the time its answer
/// was chosen, so the repository is read as the answer saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedCommit {
    /// The full 40-hex object id.
    pub oid: String,
    pub committed_at: String,
    /// The default branch it was read from (today's default branch, as the API names it).
    pub branch: String,
}

/// Where a thread record came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadProvenance {
    /// The discussion's page on GitHub.
    pub source_url: String,
    /// The GraphQL endpoint asked.
    pub api_url: String,
    /// When it was harvested (RFC 3339, UTC).
    pub harvested_at: String,
    /// The API's node ids.
    pub repository_id: String,
    pub category_id: String,
    pub discussion_id: String,
    pub answer_id: String,
}

/// An answered discussion, harvested: the question, its accepted answer and its commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// `owner/name#number`, the key.
    pub key: String,
    pub repo: String,
    /// The category's name.
    pub category: String,
    pub number: u64,
    pub url: String,
    pub title: String,
    pub body: String,
    /// `None`: the author's account is gone.
    pub author: Option<String>,
    pub created_at: String,
    pub upvotes: i64,
    pub answer: Answer,
    pub commit: PinnedCommit,
    /// The repository's primary language and theme, from its record (empty when unknown):
    /// the question's `repo.language` and `repo.theme`.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::empty_text")]
    pub language: String,
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::empty_text")]
    pub theme: String,
    pub provenance: ThreadProvenance,
}

impl Thread {
    /// The key of the thread `number` of `repo`.
    pub fn key_of(repo: &str, number: u64) -> String {
        format!("{repo}#{number}")
    }
}
