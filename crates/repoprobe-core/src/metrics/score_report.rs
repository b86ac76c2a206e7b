//! What `score` takes and gives: [`ScoreOptions`] and the [`ScoreReport`] with its rows (docs/metrics.md#the-score-report).
//! Types only, in a module of their own so that the computations (`bootstrap`, `strata`, …)
//! and `score` use them without importing each other.

use super::cluster::{CiMethod, Cluster};
use super::grid::MissingPolicy;
use super::weights::WeightRule;
use super::{audit, items, retrieval};
use crate::issue::Issue;
use crate::sort::CollectTree;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A stratification axis of Table 4.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum Stratum {
    Category,
    Theme,
    Language,
}

impl Stratum {
    pub const ALL: &'static [Stratum] = <Stratum as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn of(self, q: &crate::model::Question) -> &str {
        match self {
            Stratum::Category => &q.category,
            Stratum::Theme => &q.repo.theme,
            Stratum::Language => &q.repo.language,
        }
    }
}

/// What to compute.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreOptions {
    pub missing: MissingPolicy,
    /// The judge for strata, reliability, items and paired comparison; `None` picks the judge
    /// with the most valid judgments.
    pub judge: Option<String>,
    /// What moves together: the unit of the standard errors, intervals and bootstraps
    /// (docs/metrics.md#clustered-uncertainty).
    pub cluster: Cluster,
    /// How the 95 % intervals are made: mean ± 1.96 SE, or a bootstrap over whole clusters.
    pub ci: CiMethod,
    /// Bootstrap resamples under `ci = bootstrap` (the judges' agreement is always
    /// bootstrapped); 0 turns bootstrap intervals off.
    pub bootstrap: u32,
    pub seed: u64,
    /// Which strata to compute (all three by default).
    pub strata: Vec<Stratum>,
    /// Paired comparison of two models under the judge in force.
    pub compare: Option<(String, String)>,
    /// Per-item attainment and judge agreement (large on big benchmarks).
    pub items: bool,
    /// Questions left out of every number, with their answers and judgments: the "what if the
    /// benchmark had not had these questions" of a reader who doubts some. Named in the policy
    /// block of the report, so a table computed without them says so.
    pub drop_questions: BTreeSet<String>,
    /// Checklist items weighted otherwise than their checklist says (`weights`): the "would the
    /// ranking hold" of a reader who doubts the weights. Named in the policy block too.
    pub weights: Vec<WeightRule>,
    /// A contamination window (`YYYY-MM-DD`, or a date and time in UTC): only the questions
    /// created on or after it count ([`Dataset::created_window`](crate::Dataset::created_window)),
    /// and the report says how many ([`ScoreReport::created_after`]), beside every table.
    pub created_after: Option<String>,
    /// The runs' evidence per model ([`ScoreReport::evidence`]) over the questions in force.
    pub evidence: bool,
    /// The total-score histograms ([`ScoreReport::histograms`]) over the questions in force.
    pub histograms: bool,
    /// A panel of judges scored as one more judge ([`ScoreReport::panel`]); the judge in force
    /// when `judge` is `None`.
    pub panel: Option<super::panel::Panel>,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        ScoreOptions {
            missing: MissingPolicy::Zero,
            judge: None,
            cluster: Cluster::Repo,
            ci: CiMethod::Clt,
            bootstrap: 1000,
            seed: 0,
            strata: Stratum::ALL.to_vec(),
            compare: None,
            items: false,
            drop_questions: BTreeSet::new(),
            weights: Vec::new(),
            created_after: None,
            evidence: false,
            histograms: false,
            panel: None,
        }
    }
}

/// The policy block of the report: always shown with the numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyInfo {
    pub missing: MissingPolicy,
    pub std: String,
    /// The unit of independence of every SE and interval.
    #[serde(default)]
    pub cluster: Cluster,
    /// How every `ci95` was made.
    #[serde(default)]
    pub ci: CiMethod,
    /// Bootstrap resamples and seed behind a bootstrap `ci95` (0 = no bootstrap).
    pub bootstrap: u32,
    pub seed: u64,
    /// Questions left out of every number (`ScoreOptions::drop_questions`), sorted.
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub dropped_questions: Vec<String>,
    /// The weight rules in force (`ScoreOptions::weights`), as given: `QUESTION/ITEM=W`.
    #[serde(default, skip_serializing_if = "crate::skip::empty")]
    pub weights: Vec<String>,
}

/// One row of Table 3, for one (model, judge). Percentages are unrounded (0–100).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelScore {
    pub model: String,
    pub judge: String,
    /// Questions with at least one valid judgment.
    pub questions: usize,
    pub judgments: usize,
    /// Filled cells / grid (0–1).
    pub coverage: Option<f64>,
    pub overall: Option<f64>,
    pub knowledge: Option<f64>,
    pub clarity: Option<f64>,
    pub perfect: Option<f64>,
    /// The clustered standard error of Overall, in percentage points; `None` below two
    /// clusters with cells, where it is undefined.
    #[serde(default)]
    pub se: Option<f64>,
    /// Overall's 95 % interval under `policy.ci`; `None` where the SE is undefined (or the
    /// bootstrap is off).
    pub ci95: Option<[f64; 2]>,
    /// The clustered standard errors of Knowledge, Clarity and the perfect-solve rate (points).
    #[serde(default)]
    pub knowledge_se: Option<f64>,
    #[serde(default)]
    pub clarity_se: Option<f64>,
    #[serde(default)]
    pub perfect_se: Option<f64>,
    /// The clusters the cells in force fall in (the C of the SE).
    #[serde(default)]
    pub clusters: usize,
    /// The rank range among the models of the same judge: [1 + models surely ahead, N −
    /// models surely behind] (docs/metrics.md#rank-ranges).
    #[serde(default)]
    pub rank: Option<[usize; 2]>,
    /// Where the noise comes from, in points² (docs/metrics.md#variance-components).
    #[serde(default)]
    pub variance: super::uncertainty::Variance,
    /// Attempts and judge runs seen: the grid is questions × attempts × runs.
    pub attempts: usize,
    pub runs: usize,
    /// Benchmark questions the grid runs over (after dropped questions).
    #[serde(default)]
    pub benchmark_questions: usize,
    /// Of those, questions this model never answered: no answer record (not even a failed run)
    /// and no valid judgment by this judge. Under `missing = zero` they count as 0 like a failed
    /// run, but the reader is told (docs/metrics.md#never-answered-vs-failed): a model run on a
    /// subset of the benchmark is not a model that failed the rest.
    #[serde(default)]
    pub never_answered: usize,
}

impl ModelScore {
    /// The note a reader needs when questions this model never saw count as 0, e.g. "answered
    /// 3 of 27 questions; 24 counted as 0"; `None` when there are none or they are left out.
    pub fn never_answered_note(&self, policy: MissingPolicy) -> Option<String> {
        (policy == MissingPolicy::Zero && self.never_answered > 0).then(|| {
            format!(
                "answered {} of {} questions; {} counted as 0",
                self.benchmark_questions - self.never_answered.min(self.benchmark_questions),
                self.benchmark_questions,
                self.never_answered
            )
        })
    }
}

/// One stratum of Table 4: statistics over models of their per-stratum values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StratumRow {
    pub stratum: String,
    /// Benchmark questions in this stratum.
    pub questions: usize,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub perfect_mean: Option<f64>,
    pub perfect_std: Option<f64>,
    pub per_model: BTreeMap<String, StratumCell>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StratumCell {
    pub overall: Option<f64>,
    pub perfect: Option<f64>,
}

/// Mean, sample std and range of one model's Overall across judge runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub range: Option<f64>,
    /// The per-run values, by judge_run.
    pub per_run: BTreeMap<u32, f64>,
}

/// One row of Table 5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityRow {
    pub model: String,
    pub judge: String,
    pub runs: usize,
    pub checklist: Spread,
    pub scalar: Option<Spread>,
}

/// One column of Table 7.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureModeRow {
    pub model: String,
    pub failures: usize,
    pub shares: BTreeMap<String, f64>,
}

/// Everything `score` computes (docs/metrics.md#the-score-report, plus the additions beyond the paper).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreReport {
    pub policy: PolicyInfo,
    /// The judge in force for strata, reliability, items and the paired comparison.
    pub judge: Option<String>,
    pub models: Vec<ModelScore>,
    pub strata: BTreeMap<String, Vec<StratumRow>>,
    pub reliability: Vec<ReliabilityRow>,
    /// The classifier whose labels the failure-mode shares use (the one with the most labels).
    pub classifier: Option<String>,
    pub failure_modes: Vec<FailureModeRow>,
    /// Table 7's average column: the mean over models of each mode's share.
    pub failure_mode_average: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "crate::skip::none")]
    pub paired: Option<super::paired::Paired>,
    #[serde(skip_serializing_if = "crate::skip::none")]
    pub items: Option<Vec<items::ItemRow>>,
    /// Per model, whether its runs read the questions' evidence (docs/metrics.md#retrieval);
    /// empty when no question has evidence.
    #[serde(default)]
    pub retrieval: Vec<retrieval::RetrievalRow>,
    pub audit: Vec<audit::Finding>,
    pub issues: Vec<IssueOut>,
    /// The contamination window in force (`ScoreOptions::created_after`): how many questions
    /// the numbers are over, of how many loaded. Every table built from the report says it.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub created_after: Option<crate::dataset::CreatedWindow>,
    /// The runs' evidence per model (`ScoreOptions::evidence`), over the questions in force.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub evidence: Option<Vec<super::evidence::ModelEvidence>>,
    /// The total-score histograms per (model, judge) (`ScoreOptions::histograms`), over the
    /// questions in force.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub histograms: Option<Vec<super::histogram::ScoreHistogram>>,
    /// The panel of judges asked for (`ScoreOptions::panel`): its name, members, rule, counts
    /// and each member's agreement with it.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub panel: Option<super::panel::PanelReport>,
}

impl ScoreReport {
    /// The report of no data, without running [`score`](super::score): what a page shows before any file is
    /// loaded, at the cost of a few structs rather than the metrics code (a test checks it is
    /// what `score` gives for an empty dataset).
    pub fn empty(opts: &ScoreOptions) -> ScoreReport {
        ScoreReport {
            policy: policy(opts),
            judge: None,
            models: Vec::new(),
            strata: opts
                .strata
                .iter()
                .map(|s| (s.as_str().to_string(), Vec::new()))
                .collect_map(),
            reliability: Vec::new(),
            classifier: None,
            failure_modes: Vec::new(),
            failure_mode_average: BTreeMap::new(),
            paired: None,
            items: opts.items.then(Vec::new),
            retrieval: Vec::new(),
            audit: Vec::new(),
            issues: Vec::new(),
            created_after: None,
            evidence: opts.evidence.then(Vec::new),
            histograms: opts.histograms.then(Vec::new),
            panel: None,
        }
    }
}

/// An issue as docs/metrics.md#the-score-report prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueOut {
    pub file: String,
    pub location: String,
    pub message: String,
}

impl From<&Issue> for IssueOut {
    fn from(i: &Issue) -> Self {
        IssueOut {
            file: i.file.clone(),
            location: i.location.to_string(),
            message: i.message.clone(),
        }
    }
}

/// The policies in force, as the report states them (the dropped questions are added by
/// `score` after).
pub(crate) fn policy(opts: &ScoreOptions) -> PolicyInfo {
    PolicyInfo {
        missing: opts.missing,
        std: "sample".to_string(),
        cluster: opts.cluster,
        ci: opts.ci,
        bootstrap: opts.bootstrap,
        seed: opts.seed,
        dropped_questions: Vec::new(),
        weights: opts.weights.iter().map(ToString::to_string).collect(),
    }
}
