//! One row per run (question × model × attempt, docs/metrics.md#runs): its verdict under the
//! judge in force, what it read of the question's evidence, what it did (turns, tool calls by
//! kind, edit attempts) and what it cost; and the one filter and order the CLI's `repoprobe
//! runs` and the site's Runs view both apply, so that a filter counts the same runs in both.
//!
//! Every fact is the answer record's (`agent`, `usage`, `duration_s`) or the judgments' and
//! labels' of the judge and classifier in force: the rows are what the retrieval and evidence
//! tables average, one run at a time, never a second computation.

use super::choice::{classifier_in_force, in_force, judge_in_force};
use super::error::ScoreError;
use super::grid::{self, FAILURE_THRESHOLD};
use super::index::Index;
use super::retrieval::files_read;
use super::score_report::ScoreOptions;
use super::weights::Resolved;
use crate::dataset::Dataset;
use crate::model::agent::AgentBlock;
use crate::model::{Answer, FailureMode, ItemKind, Judgment, KeyRef, Keyed, Question};
use crate::sort::CollectTree;
use crate::sort::SharedSort;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What became of a run, under the judge in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Verdict {
    /// Every judgment gave every item its full weight (Overall 100 %).
    Perfect,
    /// Judged, the mean Overall at or above the failure threshold (60 %), not perfect.
    Partial,
    /// The mean Overall below the failure threshold: the answers `classify-failures` labels.
    Failure,
    /// An answer without a judgment of the judge in force.
    NotJudged,
    /// The run failed (`error` set): there is no answer.
    Error,
}

impl Verdict {
    pub const ALL: &'static [Verdict] = <Verdict as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        s.parse().ok()
    }

    /// In words, for tables.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::NotJudged => "not judged",
            other => other.as_str(),
        }
    }
}

/// One run. A fact the answer record does not carry is `None`, never 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub question_id: String,
    pub category: String,
    pub model: String,
    pub attempt: u32,
    pub verdict: Verdict,
    /// Mean Overall (0–100) over the judge in force's runs on this answer, under the weights in
    /// force; `None` when not judged.
    pub score: Option<f64>,
    /// The judge in force's judgments of this answer.
    pub judge_runs: usize,
    /// The classifier in force's failure mode, when it labelled this run.
    pub failure_mode: Option<FailureMode>,
    /// The question's evidence paths (its knowledge items', each once, sorted) this run read;
    /// `None` when the answer does not say what it read or the question has no evidence.
    pub evidence_read: Option<Vec<String>>,
    /// The question's evidence paths it did not read (as `evidence_read`).
    pub evidence_missed: Option<Vec<String>>,
    /// |evidence read| ÷ |evidence| in percent (retrieval's evidence recall, one run).
    pub evidence_recall: Option<f64>,
    /// How many files it read (`agent.files_read`, each once).
    pub files_read: Option<usize>,
    pub turns: Option<u64>,
    /// Tool calls by kind (`agent.tool_calls`); `None` when not recorded.
    pub tool_calls: Option<BTreeMap<String, u64>>,
    /// Edit tool calls attempted, refused by the sandbox or not (`agent.tool_calls.edit`;
    /// docs/metrics.md#edit-attempts); `None` when the tool calls are not recorded.
    pub edit_attempts: Option<u64>,
    /// Whether the worktree was left changed (`agent.worktree_changed`).
    pub worktree_changed: Option<bool>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub duration_s: Option<f64>,
}

impl RunRow {
    /// The run read none of its question's evidence (known only when both are).
    pub fn read_no_evidence(&self) -> bool {
        self.evidence_read.as_ref().is_some_and(Vec::is_empty)
    }

    /// The run attempted at least one edit.
    pub fn attempted_edit(&self) -> bool {
        self.edit_attempts.is_some_and(|n| n > 0)
    }

    /// Input and output tokens, when either is known.
    pub fn tokens(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0) + o.unwrap_or(0)),
        }
    }

    /// Tool calls of every kind.
    pub fn calls(&self) -> Option<u64> {
        self.tool_calls.as_ref().map(|c| c.values().sum())
    }
}

/// The rows and the judge and classifier they were read under.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Runs {
    pub judge: Option<String>,
    pub classifier: Option<String>,
    pub rows: Vec<RunRow>,
}

/// Every answer record of the questions in force (`opts`: the judge, the weight rules, dropped
/// questions, the created-after window; the missing policy does not apply to runs), in
/// (question, model, attempt) order. Answers to unknown questions are not runs (the loader
/// reported them).
pub fn runs(ds: &Dataset, opts: &ScoreOptions) -> Result<Runs, ScoreError> {
    let kept = in_force(ds, opts)?;
    let ds = kept.as_ref().map_or(ds, |(kept, _)| kept);
    let index = Index::new(ds);
    let weights = Resolved::new(&opts.weights, &index, kept.is_none())?;
    let judge = judge_in_force(ds, opts.judge.as_deref())?;
    let classifier = classifier_in_force(ds).map(str::to_string);
    let mut judgments: BTreeMap<KeyRef, Vec<&Judgment>> = BTreeMap::new();
    for j in ds
        .judgments
        .iter()
        .filter(|j| Some(&j.judge) == judge.as_ref())
    {
        judgments.entry(j.key()).or_default().push(j);
    }
    let labels: BTreeMap<KeyRef, FailureMode> = ds
        .failure_labels
        .iter()
        .filter(|l| Some(&l.classifier) == classifier.as_ref())
        .map(|l| (l.key(), l.mode))
        .collect_map();
    let mut rows: Vec<RunRow> = ds
        .answers
        .iter()
        .filter_map(|a| {
            let &qi = index.by_id.get(a.question_id.as_str())?;
            let key = a.key();
            let js = judgments.get(&key).map_or(&[][..], Vec::as_slice);
            let judged = Judged::of(js, (qi, index.questions[qi as usize]), &weights);
            Some(row(
                a,
                index.questions[qi as usize],
                judged,
                labels.get(&key).copied(),
            ))
        })
        .collect();
    rows.shared_sort_by(|a, b| a.key().cmp(&b.key()));
    Ok(Runs {
        judge,
        classifier,
        rows,
    })
}

crate::model::key::keyed!(RunRow);

/// What the judge in force's judgments of one answer say.
struct Judged {
    runs: usize,
    score: Option<f64>,
    perfect: bool,
}

impl Judged {
    fn of(js: &[&Judgment], (qi, q): (u32, &Question), weights: &Resolved) -> Judged {
        let cells: Vec<grid::Cell> = js
            .iter()
            .map(|j| grid::cell(j, qi, q, false, weights))
            .collect();
        let mut s: Vec<f64> = cells.iter().map(|c| c.s).collect();
        // Summed in value order: no order of the judgments changes a digit.
        s.sort_unstable_by(f64::total_cmp);
        Judged {
            runs: cells.len(),
            score: super::stats::mean(&s).map(|m| m * 100.0 / f64::from(crate::model::FULL_SCORE)),
            perfect: !cells.is_empty() && cells.iter().all(|c| c.perfect),
        }
    }
}

fn row(a: &Answer, q: &Question, judged: Judged, failure_mode: Option<FailureMode>) -> RunRow {
    let block = AgentBlock::of(a);
    let read = block.and_then(files_read);
    let evidence: BTreeSet<&str> = q
        .checklist
        .iter()
        .filter(|c| c.kind == ItemKind::Knowledge)
        .flat_map(|c| c.evidence.iter().map(|e| e.path.as_str()))
        .collect_set();
    let (evidence_read, evidence_missed) = match &read {
        Some(read) if !evidence.is_empty() => {
            let (hit, missed): (Vec<&str>, Vec<&str>) =
                evidence.iter().partition(|p| read.contains(**p));
            (
                Some(hit.into_iter().map(str::to_string).collect::<Vec<_>>()),
                Some(missed.into_iter().map(str::to_string).collect::<Vec<_>>()),
            )
        }
        _ => (None, None),
    };
    let evidence_recall = evidence_read
        .as_ref()
        .map(|hit| 100.0 * hit.len() as f64 / evidence.len() as f64);
    let tool_calls = block.as_ref().and_then(|b| b.tool_calls.clone());
    let usage = a.usage.clone().unwrap_or_default();
    RunRow {
        question_id: a.question_id.clone(),
        category: q.category.clone(),
        model: a.model.clone(),
        attempt: a.attempt,
        verdict: verdict(a, &judged),
        score: judged.score,
        judge_runs: judged.runs,
        failure_mode,
        evidence_read,
        evidence_missed,
        evidence_recall,
        files_read: read.as_ref().map(BTreeSet::len),
        turns: block.as_ref().and_then(|b| b.turns),
        edit_attempts: super::evidence::edit_attempts(a),
        tool_calls,
        worktree_changed: block.as_ref().and_then(|b| b.worktree_changed),
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cost_usd: usage.cost_usd.filter(|c| c.is_finite()),
        duration_s: a.duration_s.filter(|d| d.is_finite()),
    }
}

fn verdict(a: &Answer, judged: &Judged) -> Verdict {
    match judged.score {
        _ if a.error.is_some() => Verdict::Error,
        None => Verdict::NotJudged,
        Some(_) if judged.perfect => Verdict::Perfect,
        Some(s) if s < 100.0 * FAILURE_THRESHOLD => Verdict::Failure,
        Some(_) => Verdict::Partial,
    }
}

/// Which runs to keep: every condition given must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFilter {
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub question: Option<String>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub failure_mode: Option<FailureMode>,
    /// Only the runs that read none of their question's evidence (known: both given).
    #[serde(default, skip_serializing_if = "crate::skip::not")]
    pub read_no_evidence: bool,
    /// Only the runs that attempted an edit.
    #[serde(default, skip_serializing_if = "crate::skip::not")]
    pub attempted_edit: bool,
    /// Score at least this (percent); a run without a score is left out.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub min_score: Option<f64>,
    /// Score at most this (percent); a run without a score is left out.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub max_score: Option<f64>,
}

impl RunFilter {
    pub fn keeps(&self, r: &RunRow) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        is(&self.model, &r.model)
            && is(&self.question, &r.question_id)
            && is(&self.category, &r.category)
            && self.verdict.is_none_or(|v| v == r.verdict)
            && self.failure_mode.is_none_or(|m| Some(m) == r.failure_mode)
            && (!self.read_no_evidence || r.read_no_evidence())
            && (!self.attempted_edit || r.attempted_edit())
            && self
                .min_score
                .is_none_or(|m| r.score.is_some_and(|s| s >= m))
            && self
                .max_score
                .is_none_or(|m| r.score.is_some_and(|s| s <= m))
    }

    /// Whether no condition is set.
    pub fn is_empty(&self) -> bool {
        self == &RunFilter::default()
    }
}

/// A column the rows can be ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Column {
    Question,
    Model,
    Attempt,
    Category,
    Verdict,
    Score,
    EvidenceRecall,
    FilesRead,
    Turns,
    ToolCalls,
    EditAttempts,
    Tokens,
    Cost,
    Duration,
}

impl Column {
    pub const ALL: &'static [Column] = <Column as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Column> {
        s.parse().ok()
    }

    /// The row's value in this column, as a number (text columns: `None`).
    fn number(self, r: &RunRow) -> Option<f64> {
        match self {
            Column::Attempt => Some(f64::from(r.attempt)),
            Column::Score => r.score,
            Column::EvidenceRecall => r.evidence_recall,
            Column::FilesRead => r.files_read.map(|n| n as f64),
            Column::Turns => r.turns.map(|n| n as f64),
            Column::ToolCalls => r.calls().map(|n| n as f64),
            Column::EditAttempts => r.edit_attempts.map(|n| n as f64),
            Column::Tokens => r.tokens().map(|n| n as f64),
            Column::Cost => r.cost_usd,
            Column::Duration => r.duration_s,
            Column::Question | Column::Model | Column::Category | Column::Verdict => None,
        }
    }

    fn compare(self, a: &RunRow, b: &RunRow) -> std::cmp::Ordering {
        match self {
            Column::Question => a.question_id.cmp(&b.question_id),
            Column::Model => a.model.cmp(&b.model),
            Column::Category => a.category.cmp(&b.category),
            Column::Verdict => a.verdict.cmp(&b.verdict),
            _ => match (self.number(a), self.number(b)) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                (x, y) => x.is_none().cmp(&y.is_none()),
            },
        }
    }
}

/// An order of the rows: a column, ascending or not. Rows without a value in a numeric column
/// come last either way; ties keep the (question, model, attempt) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    pub column: Column,
    pub descending: bool,
}

/// Why an order (`COLUMN` or `COLUMN:desc`) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error("no column {0:?} to sort by (one of: {names})", names = column_names())]
    NoColumn(String),
    #[error("{0:?} is not a direction: asc or desc")]
    NoDirection(String),
}

fn column_names() -> String {
    let names: Vec<&str> = Column::ALL.iter().map(|c| c.as_str()).collect();
    names.join(", ")
}

impl Order {
    /// `COLUMN` or `COLUMN:desc` (`:asc` too): the CLI's `--sort` and the URL's `&sort=`.
    pub fn parse(s: &str) -> Result<Order, OrderError> {
        let (name, dir) = s.split_once(':').unwrap_or((s, "asc"));
        let column = Column::parse(name).ok_or_else(|| OrderError::NoColumn(name.to_string()))?;
        let descending = match dir {
            "asc" => false,
            "desc" => true,
            other => return Err(OrderError::NoDirection(other.to_string())),
        };
        Ok(Order { column, descending })
    }

    pub fn as_string(self) -> String {
        if self.descending {
            format!("{}:desc", self.column.as_str())
        } else {
            self.column.as_str().to_string()
        }
    }

    /// Sorts `rows` (positions into `all`), stably.
    pub fn sort(self, all: &[RunRow], rows: &mut [usize]) {
        rows.shared_sort_by(|&a, &b| {
            let (a, b) = (&all[a], &all[b]);
            let missing = |r: &RunRow| self.column.number(r).is_none() && self.column.is_numeric();
            // Missing values last in both directions.
            missing(a).cmp(&missing(b)).then_with(|| {
                let o = self.column.compare(a, b);
                if self.descending { o.reverse() } else { o }
            })
        });
    }
}

impl Column {
    fn is_numeric(self) -> bool {
        !matches!(
            self,
            Column::Question | Column::Model | Column::Category | Column::Verdict
        )
    }
}

/// The positions of the rows `filter` keeps, in `order` (the rows' own order without one).
pub fn select(rows: &[RunRow], filter: &RunFilter, order: Option<Order>) -> Vec<usize> {
    let mut kept: Vec<usize> = (0..rows.len())
        .filter(|&i| filter.keeps(&rows[i]))
        .collect();
    if let Some(o) = order {
        o.sort(rows, &mut kept);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SourceFile;
    use serde_json::{Value, json};

    const BENCH: &str = include_str!("../../../../testdata/golden/benchmark.jsonl");

    /// q1 (k1's evidence `src/a.rs` and `src/b.rs`) and q2 (none), and these records.
    fn dataset(records: &[Value]) -> Dataset {
        let mut lines: Vec<String> = BENCH
            .lines()
            .take(2)
            .enumerate()
            .map(|(n, l)| {
                let mut q: Value = serde_json::from_str(l).unwrap();
                if n == 0 {
                    q["checklist"][0]["evidence"] = json!(["src/b.rs", "./src/a.rs"]);
                }
                q.to_string()
            })
            .collect();
        lines.extend(records.iter().map(Value::to_string));
        let text = lines.join("\n");
        let l = crate::load(
            &[SourceFile {
                name: "d.jsonl",
                bytes: text.as_bytes(),
            }],
            crate::LoadOptions::default(),
        );
        assert!(l.issues.is_empty(), "{:?}", l.issues);
        l.dataset
    }

    fn answer(q: &str, model: &str, attempt: u32, agent: Value) -> Value {
        json!({"question_id": q, "model": model, "attempt": attempt, "answer": "a", "agent": agent,
               "usage": {"input_tokens": 100, "output_tokens": 7, "cost_usd": 0.5}, "duration_s": 3.0})
    }

    fn judgment(q: &str, model: &str, judge: &str, run: u32, scores: [u32; 3]) -> Value {
        json!({"question_id": q, "model": model, "attempt": 0, "judge": judge, "judge_run": run,
               "items": [{"id": "k1", "rationale": "r", "score": scores[0]},
                         {"id": "k2", "rationale": "r", "score": scores[1]},
                         {"id": "clarity", "rationale": "r", "score": scores[2]}]})
    }

    fn fixture() -> Dataset {
        dataset(&[
            answer(
                "q1",
                "A",
                0,
                json!({"files_read": ["src/a.rs", "README.md"], "turns": 4,
                       "tool_calls": {"read": 2, "edit": 1}, "worktree_changed": false}),
            ),
            answer(
                "q1",
                "B",
                0,
                json!({"files_read": [], "tool_calls": {"search": 3}}),
            ),
            answer("q2", "A", 0, json!({"files_read": ["x.rs"]})),
            json!({"question_id": "q2", "model": "B", "attempt": 0, "answer": null, "error": "timeout"}),
            answer("q1", "C", 0, json!({})),
            // Two runs of one judge: 10 and 8 (mean 90 %, not perfect); one run of another.
            judgment("q1", "A", "J", 0, [5, 4, 1]),
            judgment("q1", "A", "J", 1, [5, 2, 1]),
            judgment("q1", "B", "J", 0, [3, 0, 1]),
            judgment("q2", "A", "J", 0, [5, 4, 1]),
            judgment("q1", "A", "K", 0, [0, 0, 0]),
            json!({"question_id": "q1", "model": "B", "attempt": 0, "classifier": "c",
                   "mode": "context_miss", "rationale": "r"}),
        ])
    }

    fn rows(ds: &Dataset, opts: &ScoreOptions) -> Vec<RunRow> {
        runs(ds, opts).unwrap().rows
    }

    #[test]
    fn each_run_has_its_verdict_evidence_and_facts() {
        let ds = fixture();
        let r = runs(&ds, &ScoreOptions::default()).unwrap();
        assert_eq!(r.judge.as_deref(), Some("J"));
        assert_eq!(r.classifier.as_deref(), Some("c"));
        let keys: Vec<(&str, &str)> = r
            .rows
            .iter()
            .map(|r| (r.question_id.as_str(), r.model.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("q1", "A"),
                ("q1", "B"),
                ("q1", "C"),
                ("q2", "A"),
                ("q2", "B")
            ]
        );
        let a = &r.rows[0];
        assert_eq!(a.verdict, Verdict::Partial);
        assert_eq!(a.score, Some(90.0));
        assert_eq!(a.judge_runs, 2);
        assert_eq!(
            a.evidence_read.as_deref(),
            Some(&["src/a.rs".to_string()][..])
        );
        assert_eq!(
            a.evidence_missed.as_deref(),
            Some(&["src/b.rs".to_string()][..])
        );
        assert_eq!(a.evidence_recall, Some(50.0));
        assert_eq!(
            (a.files_read, a.turns, a.edit_attempts),
            (Some(2), Some(4), Some(1))
        );
        assert_eq!(
            (a.tokens(), a.calls(), a.cost_usd),
            (Some(107), Some(3), Some(0.5))
        );
        let b = &r.rows[1];
        assert_eq!((b.verdict, b.score), (Verdict::Failure, Some(40.0)));
        assert_eq!(b.failure_mode, Some(FailureMode::ContextMiss));
        assert!(b.read_no_evidence() && !b.attempted_edit());
        assert_eq!(
            b.edit_attempts,
            Some(0),
            "tool calls recorded, none an edit"
        );
        let c = &r.rows[2];
        assert_eq!(c.verdict, Verdict::NotJudged);
        // Not recorded: unknown, never "read nothing" nor "no edit".
        assert_eq!((c.evidence_read.as_ref(), c.edit_attempts), (None, None));
        assert!(!c.read_no_evidence());
        let q2a = &r.rows[3];
        assert_eq!(q2a.verdict, Verdict::Perfect);
        assert_eq!(q2a.evidence_read, None, "q2 has no evidence");
        assert_eq!(r.rows[4].verdict, Verdict::Error);
    }

    #[test]
    fn another_judge_and_weight_rules_change_the_verdicts() {
        let ds = fixture();
        let k = rows(
            &ds,
            &ScoreOptions {
                judge: Some("K".into()),
                ..ScoreOptions::default()
            },
        );
        assert_eq!((k[0].verdict, k[0].score), (Verdict::Failure, Some(0.0)));
        assert_eq!(k[1].verdict, Verdict::NotJudged);
        // k2 weighted 0: q1/A's two runs both perfect under the rule.
        let w = rows(
            &ds,
            &ScoreOptions {
                weights: vec![crate::metrics::WeightRule::parse("q1/k2=0").unwrap()],
                ..ScoreOptions::default()
            },
        );
        assert_eq!((w[0].verdict, w[0].score), (Verdict::Perfect, Some(100.0)));
        let dropped = rows(
            &ds,
            &ScoreOptions {
                drop_questions: ["q2".to_string()].into(),
                ..ScoreOptions::default()
            },
        );
        assert_eq!(dropped.len(), 3);
    }

    #[test]
    fn filters_and_orders_are_the_same_for_every_caller() {
        let ds = fixture();
        let r = rows(&ds, &ScoreOptions::default());
        let f = |f: RunFilter| select(&r, &f, None);
        assert_eq!(
            f(RunFilter {
                read_no_evidence: true,
                ..Default::default()
            }),
            [1]
        );
        assert_eq!(
            f(RunFilter {
                attempted_edit: true,
                ..Default::default()
            }),
            [0]
        );
        assert_eq!(
            f(RunFilter {
                model: Some("A".into()),
                min_score: Some(96.0),
                ..Default::default()
            }),
            [3]
        );
        assert_eq!(
            f(RunFilter {
                verdict: Some(Verdict::Error),
                ..Default::default()
            }),
            [4]
        );
        assert_eq!(
            f(RunFilter {
                max_score: Some(50.0),
                ..Default::default()
            }),
            [1],
            "a run without a score is outside every score range"
        );
        let by_score = select(
            &r,
            &RunFilter::default(),
            Some(Order::parse("score:desc").unwrap()),
        );
        assert_eq!(
            by_score,
            [3, 0, 1, 2, 4],
            "no score last, ties in key order"
        );
        let by_score = select(
            &r,
            &RunFilter::default(),
            Some(Order::parse("score").unwrap()),
        );
        assert_eq!(by_score, [1, 0, 3, 2, 4]);
        let nope = Order::parse("nope").unwrap_err();
        assert_eq!(nope, OrderError::NoColumn("nope".into()));
        assert!(nope.to_string().contains("evidence_recall"), "{nope}");
        assert_eq!(
            Order::parse("score:up"),
            Err(OrderError::NoDirection("up".into()))
        );
        assert_eq!(Order::parse("cost:desc").unwrap().as_string(), "cost:desc");
    }

    #[test]
    fn the_evidence_table_shares_the_runs_edit_attempts() {
        let ds = fixture();
        let e = crate::metrics::evidence::evidence(&ds.answers);
        let a = e.iter().find(|m| m.model == "A").unwrap();
        // q1/A attempted one edit; q2/A records no tool calls: 1 of 1 known.
        assert_eq!(a.attempted_edit_pct, Some(100.0));
        let b = e.iter().find(|m| m.model == "B").unwrap();
        assert_eq!(b.attempted_edit_pct, Some(0.0));
        let c = e.iter().find(|m| m.model == "C").unwrap();
        assert_eq!(c.attempted_edit_pct, None);
    }
}
