//! The record types of docs/format.md, named as the paper names them.
//!
//! These are the *validated* shapes: the loader (`crate::load`) reads every record leniently,
//! reports what is wrong with it, and only builds these types from records that pass. Unknown
//! fields are ignored here; when a caller needs them back (the `bundle` command) the loader keeps
//! each record's raw JSON text beside it.

pub mod agent;
pub mod evidence;
pub mod failure;
pub mod key;
pub mod repo_path;
pub mod trajectory;

pub use evidence::EvidencePath;
pub use key::{AnswerKey, KeyRef, Keyed};

use crate::sort::SharedSort;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// The three code-understanding categories of §3.2; any other value is a validation issue.
pub const CATEGORIES: [&str; 3] = [
    "Project Architecture",
    "Business Logic",
    "Implementation Details",
];

/// Total weight of a question's checklist: 9 knowledge points and 1 clarity point.
pub const FULL_SCORE: u32 = 10;
/// Sum of the knowledge weights of every question (§4.1).
pub const KNOWLEDGE_WEIGHT: u32 = 9;

/// The repository a question is asked about, pinned to one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Repo {
    /// `owner/name` as on the forge.
    pub name: String,
    #[serde(default)]
    pub url: String,
    /// The commit the question and reference answer were written against.
    #[serde(default)]
    pub commit: String,
    /// Free text (the paper has 15 languages).
    #[serde(default)]
    pub language: String,
    /// Free text (the paper has 8 themes).
    #[serde(default)]
    pub theme: String,
}

/// Whether an item checks a technical fact or the answer's clarity (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    Knowledge,
    Clarity,
}

impl ItemKind {
    /// The name used in files (`knowledge`, `clarity`).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Knowledge => "knowledge",
            ItemKind::Clarity => "clarity",
        }
    }
}

/// One allowed score of an item and what earns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct RubricTier {
    pub score: u32,
    #[serde(default)]
    pub criterion: String,
}

/// One weighted checklist item. The judge may only give a score listed in `rubric`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ChecklistItem {
    pub id: String,
    pub kind: ItemKind,
    pub key_point: String,
    pub weight: u32,
    pub rubric: Vec<RubricTier>,
    /// Where in the repository, at the pinned commit, the fact this item checks can be read
    /// (docs/format.md#question): what retrieval is measured against. Knowledge items only;
    /// optional, and absent from a record that has none, so older records write back as given.
    #[serde(
        default,
        skip_serializing_if = "crate::skip::empty",
        deserialize_with = "evidence::read_entries"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<evidence::EvidenceEntry>"))]
    pub evidence: Vec<EvidencePath>,
}

impl ChecklistItem {
    pub fn allows(&self, score: u32) -> bool {
        self.rubric.iter().any(|t| t.score == score)
    }

    /// Allowed scores, ascending.
    pub fn allowed_scores(&self) -> Vec<u32> {
        let mut s: Vec<u32> = self.rubric.iter().map(|t| t.score).collect();
        s.shared_sort();
        s.dedup();
        s
    }
}

/// A benchmark question (docs/format.md#question).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Question {
    pub id: String,
    pub repo: Repo,
    /// One of [`CATEGORIES`].
    pub category: String,
    pub question: String,
    pub reference_answer: String,
    #[serde(default)]
    pub external_context: bool,
    pub checklist: Vec<ChecklistItem>,
    /// The `curation` block of a question `repoprobe curate` made (docs/format.md#question):
    /// where it came from and what each stage decided. Kept as given, read loosely (a block of
    /// another shape never costs the question); absent on questions written otherwise.
    /// [`Question::created_at`] reads the discussion's creation date from it.
    #[serde(
        default,
        skip_serializing_if = "crate::skip::none",
        with = "crate::json_text"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<serde_json::Value>"))]
    pub curation: Option<serde_json::Value>,
}

impl Question {
    /// When the discussion the question was made from was created
    /// (`curation.source.created_at`), as written; `None` when the question has no such date.
    pub fn created_at(&self) -> Option<&str> {
        self.curation
            .as_ref()?
            .get("source")?
            .get("created_at")?
            .as_str()
            .filter(|s| !s.trim().is_empty())
    }
}

/// Token and cost accounting of one agent run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

/// A model's answer to a question (docs/format.md#answer). An answer with `error` set is a failed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Answer {
    pub question_id: String,
    pub model: String,
    #[serde(default)]
    pub attempt: u32,
    #[serde(default)]
    pub answer: Option<String>,
    /// What ran the model and what it did: agent name, version, turns, the files it changed
    /// (docs/format.md#answer lists the fields `repoprobe answer` writes); other fields are kept
    /// as given. A known field of another type reads as absent, and a value that is no object
    /// as no block.
    // Read once, at load, by `agent::block`.
    #[serde(
        default,
        deserialize_with = "agent::block",
        serialize_with = "crate::json_text::serialize"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<serde_json::Value>"))]
    pub agent: Option<Box<agent::AgentBlock>>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default)]
    pub error: Option<String>,
}

/// The judge's verdict on one checklist item: rationale first, then the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ItemScore {
    pub id: String,
    #[serde(default)]
    pub rationale: String,
    pub score: u32,
}

/// A checklist judgment (docs/format.md#checklist-judgment): one entry per checklist item, in checklist order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Judgment {
    pub question_id: String,
    pub model: String,
    #[serde(default)]
    pub attempt: u32,
    pub judge: String,
    #[serde(default)]
    pub judge_run: u32,
    pub items: Vec<ItemScore>,
}

impl Judgment {
    /// The sum of its items' scores: s, 0–10 under the checklist's own weights.
    pub fn total(&self) -> u32 {
        self.items.iter().map(|i| i.score).sum()
    }
}

/// A SWE-QA-style scalar judgment (docs/format.md#scalar-judgment), the baseline of Table 5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ScalarJudgment {
    pub question_id: String,
    pub model: String,
    #[serde(default)]
    pub attempt: u32,
    pub judge: String,
    #[serde(default)]
    pub judge_run: u32,
    pub dimensions: BTreeMap<String, u32>,
    pub max_per_dimension: u32,
    #[serde(default)]
    pub rationale: String,
}

impl ScalarJudgment {
    /// Score rate in [0, 1]: sum / (dimensions × max). Validation guarantees a non-zero grid.
    pub fn rate(&self) -> f64 {
        let sum: u64 = self.dimensions.values().map(|&v| u64::from(v)).sum();
        let max = self.dimensions.len() as u64 * u64::from(self.max_per_dimension);
        if max == 0 {
            0.0
        } else {
            sum as f64 / max as f64
        }
    }
}

/// The five failure modes of §5.4 (Table 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum FailureMode {
    EditBias,
    ShallowExplanation,
    Misinterpretation,
    ContextMiss,
    Hallucination,
}

impl FailureMode {
    pub const ALL: &'static [FailureMode] = <FailureMode as strum::VariantArray>::VARIANTS;

    /// The name used in files (`edit_bias`, ...).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The mode [`FailureMode::as_str`] names.
    pub fn parse(s: &str) -> Option<FailureMode> {
        s.parse().ok()
    }

    /// The row label of the paper's Table 7.
    pub fn label(self) -> &'static str {
        match self {
            FailureMode::EditBias => "Edit Bias",
            FailureMode::ShallowExplanation => "Shallow Explanation",
            FailureMode::Misinterpretation => "Misinterpretation",
            FailureMode::ContextMiss => "Context Miss",
            FailureMode::Hallucination => "Hallucination",
        }
    }
}

/// A failure-mode label given by a classifier to a low-scoring answer (docs/format.md#failure-mode-label).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FailureLabel {
    pub question_id: String,
    pub model: String,
    #[serde(default)]
    pub attempt: u32,
    pub classifier: String,
    pub mode: FailureMode,
    #[serde(default)]
    pub rationale: String,
}

/// One value of a table as printed in a paper (docs/format.md#reported-values). `group` separates the blocks of a
/// table (Table 4's category/theme/language, Table 5's scalar/checklist).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ReportedValue {
    pub table: String,
    #[serde(default)]
    pub group: String,
    pub row: String,
    pub column: String,
    pub value: f64,
}

/// Who gave a [`Review`]: one of the reviewers, or the adjudicator who settles their
/// disagreements (docs/format.md#review).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReviewRole {
    Reviewer,
    Adjudicator,
}

impl ReviewRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewRole::Reviewer => "reviewer",
            ReviewRole::Adjudicator => "adjudicator",
        }
    }
}

/// A reviewer's verdict on a candidate question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReviewDecision {
    Accept,
    Reject,
}

impl ReviewDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewDecision::Accept => "accept",
            ReviewDecision::Reject => "reject",
        }
    }
}

/// The four checks of the human review (paper §3.2), each passed (`true`) or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ReviewCriteria {
    /// The reference answer answers the question.
    pub qa_consistency: bool,
    /// The checklist's items are the answer's key points, weighted and scored sensibly.
    pub checklist_quality: bool,
    /// The question is a real code-understanding task that stands on its own.
    pub task_validity: bool,
    /// The question and answer are about the repository's code at the pinned commit.
    pub code_relevance: bool,
}

impl ReviewCriteria {
    /// The criteria's names, in the order of the record (and of every table).
    pub const NAMES: [&'static str; 4] = [
        "qa_consistency",
        "checklist_quality",
        "task_validity",
        "code_relevance",
    ];

    /// The values, in the order of [`ReviewCriteria::NAMES`].
    pub fn values(&self) -> [bool; 4] {
        [
            self.qa_consistency,
            self.checklist_quality,
            self.task_validity,
            self.code_relevance,
        ]
    }

    /// Every criterion passed.
    pub fn all(&self) -> bool {
        self.values().iter().all(|&v| v)
    }
}

/// One person's review of one candidate question (docs/format.md#review): the four criteria,
/// the decision, and when. Key (`question_id`, `reviewer`, `role`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Review {
    pub question_id: String,
    /// Who reviewed (a name or handle; free text).
    pub reviewer: String,
    pub role: ReviewRole,
    pub criteria: ReviewCriteria,
    pub decision: ReviewDecision,
    /// Free text: why, what to fix.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub note: Option<String>,
    /// When (RFC 3339, with a time zone: `2026-03-01T12:00:00Z`).
    pub reviewed_at: String,
}

/// The results bundle of docs/format.md#results-bundle: any mix of record kinds in one object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ResultsBundle {
    /// Always `"repoprobe-results"`.
    pub format: String,
    pub version: u32,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub meta: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub benchmark: Vec<Question>,
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub answers: Vec<Answer>,
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub judgments: Vec<Judgment>,
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub scalar_judgments: Vec<ScalarJudgment>,
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub failure_modes: Vec<FailureLabel>,
    /// Values of published tables (docs/format.md#reported-values); an extension of the results bundle.
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub reported: Vec<ReportedValue>,
}

/// The `format` value that marks a results bundle.
pub const BUNDLE_FORMAT: &str = "repoprobe-results";
