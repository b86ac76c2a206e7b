//! The grid of docs/metrics.md#the-score-report: for one (model, judge), benchmark questions × attempts seen × judge runs
//! seen, and the judged cells in it. Every metric is a sum over this grid and a mean is one
//! division at the end. Under the checklist's own weights a cell's sums are whole numbers, and
//! so are their sums (f64 holds every integer below 2^53 exactly): exact, and the same in any
//! input order. Re-weighted cells (`weights`) hold fractions, summed in the grid's fixed order.

pub use super::index::Index;
use super::weights::Resolved;
use crate::dataset::Dataset;
use crate::model::{ItemKind, Judgment, Question};
use crate::sort::CollectTree;
use crate::sort::SharedSort;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// The missing-answer policy (docs/metrics.md): how grid cells without a valid judgment count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MissingPolicy {
    /// A missing cell counts as s = 0 (the default, and the paper's reading).
    #[default]
    Zero,
    /// Missing cells are left out of the means.
    Exclude,
}

impl MissingPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            MissingPolicy::Zero => "zero",
            MissingPolicy::Exclude => "exclude",
        }
    }
}

/// One judged cell: the sums of one valid judgment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Index into [`Index::questions`] (questions sorted by id).
    pub q: u32,
    pub attempt: u32,
    pub run: u32,
    /// Sum of all item scores, 0–10 (re-weighted: the weighted attainment × 10).
    pub s: f64,
    /// Sum of knowledge item scores, 0–9 (re-weighted: the weighted attainment × 9).
    pub kn: f64,
    /// The clarity score, 0 or 1.
    pub cl: f64,
    /// s = 10: every item at its full weight (re-weighted: every item of non-zero weight).
    pub perfect: bool,
}

impl Cell {
    /// Whether this judgment's Overall (s/10, under the weights in force) is below the failure
    /// threshold of paper §5.4, the one `classify-failures` picks its answers by
    /// ([`FAILURE_THRESHOLD`]).
    pub fn fails(&self) -> bool {
        self.s / f64::from(crate::model::FULL_SCORE) < FAILURE_THRESHOLD
    }
}

/// An answer whose checklist score (s/10) is below this share is a failure (paper §5.4): the
/// failure rate's cells and the answers `classify-failures` labels
/// (`protocol::classify::candidates`).
pub const FAILURE_THRESHOLD: f64 = 0.6;

/// Integer sums over a set of cells, and the size of the grid they belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub filled: u64,
    pub grid: u64,
    pub s: f64,
    pub kn: f64,
    pub cl: f64,
    pub perfect: u64,
}

impl Tally {
    pub fn add(&mut self, c: &Cell) {
        self.filled += 1;
        self.s += c.s;
        self.kn += c.kn;
        self.cl += c.cl;
        self.perfect += u64::from(c.perfect);
    }

    pub fn merge(&mut self, o: &Tally) {
        self.filled += o.filled;
        self.grid += o.grid;
        self.s += o.s;
        self.kn += o.kn;
        self.cl += o.cl;
        self.perfect += o.perfect;
    }

    /// The number of cells a mean runs over under `policy`.
    pub fn denominator(&self, policy: MissingPolicy) -> u64 {
        match policy {
            MissingPolicy::Zero => self.grid.max(self.filled),
            MissingPolicy::Exclude => self.filled,
        }
    }

    fn pct(&self, num: f64, per_cell: u64, policy: MissingPolicy) -> Option<f64> {
        let d = self.denominator(policy);
        (d > 0).then(|| 100.0 * num / (per_cell * d) as f64)
    }

    /// Overall = mean of s/10, in percent.
    pub fn overall(&self, p: MissingPolicy) -> Option<f64> {
        self.pct(self.s, u64::from(crate::model::FULL_SCORE), p)
    }
    /// Knowledge = mean of s_kn/9, in percent.
    pub fn knowledge(&self, p: MissingPolicy) -> Option<f64> {
        self.pct(self.kn, u64::from(crate::model::KNOWLEDGE_WEIGHT), p)
    }
    /// Clarity = mean of s_cl, in percent.
    pub fn clarity(&self, p: MissingPolicy) -> Option<f64> {
        self.pct(self.cl, 1, p)
    }
    /// Perfect solve rate = share of cells with s = 10, in percent.
    pub fn perfect_rate(&self, p: MissingPolicy) -> Option<f64> {
        self.pct(self.perfect as f64, 1, p)
    }
    /// Filled cells / grid, a fraction.
    pub fn coverage(&self) -> Option<f64> {
        (self.grid > 0).then(|| self.filled as f64 / self.grid as f64)
    }
}

/// The grid of one (model, judge).
#[derive(Debug, Clone)]
pub struct Grid<'d> {
    pub model: &'d str,
    pub judge: &'d str,
    pub attempts: BTreeSet<u32>,
    pub runs: BTreeSet<u32>,
    /// Sorted by (q, attempt, run).
    pub cells: Vec<Cell>,
}

impl Grid<'_> {
    /// Questions with neither a cell of this grid nor an answer record of its model
    /// (`answered`, indexed by question, from [`answered_questions`]).
    pub fn never_answered(&self, answered: Option<&Vec<bool>>, questions: usize) -> usize {
        let mut seen = answered.cloned().unwrap_or_else(|| vec![false; questions]);
        for c in &self.cells {
            seen[c.q as usize] = true;
        }
        seen.iter().filter(|&&s| !s).count()
    }

    /// Cells per question: attempts × runs.
    pub fn per_question(&self) -> u64 {
        self.attempts.len() as u64 * self.runs.len() as u64
    }

    /// Sums over every question, grid included.
    pub fn tally(&self, questions: usize) -> Tally {
        let mut t = Tally {
            grid: self.per_question() * questions as u64,
            ..Tally::default()
        };
        self.cells.iter().for_each(|c| t.add(c));
        t
    }

    /// Sums per question (index = question index), each with its own grid.
    pub fn per_question_tallies(&self, questions: usize) -> Vec<Tally> {
        let mut out = vec![
            Tally {
                grid: self.per_question(),
                ..Tally::default()
            };
            questions
        ];
        for c in &self.cells {
            out[c.q as usize].add(c);
        }
        out
    }

    /// Mean Overall per question (index = question index), `None` where a question has no
    /// cell in force (only under `exclude`): what paired comparisons and ranks compare.
    pub fn per_question_means(&self, questions: usize, p: MissingPolicy) -> Vec<Option<f64>> {
        self.per_question_tallies(questions)
            .iter()
            .map(|t| t.overall(p))
            .collect()
    }

    /// Number of distinct questions with at least one cell.
    pub fn questions_judged(&self) -> usize {
        let mut n = 0;
        let mut last = None;
        for c in &self.cells {
            if last != Some(c.q) {
                n += 1;
                last = Some(c.q);
            }
        }
        n
    }
}

/// Sums a judgment against its question's checklist, under the reader's weights if any
/// changed this question's.
///
/// `unique_ids`: no two items of the question's checklist share an id (true of every valid
/// question): an item scored in the checklist's order is then found at its own place, without
/// comparing its id with the items before it.
pub fn cell(
    j: &Judgment,
    q_index: u32,
    q: &Question,
    unique_ids: bool,
    weights: &Resolved,
) -> Cell {
    if let Some(new) = weights.of(q_index) {
        let scores: Vec<u32> = q
            .checklist
            .iter()
            .map(|c| {
                j.items
                    .iter()
                    .find(|it| it.id == c.id)
                    .map_or(0, |it| it.score)
            })
            .collect();
        let (s, kn, cl, perfect) = super::weights::weighted_sums(q, new, &scores);
        return Cell {
            q: q_index,
            attempt: j.attempt,
            run: j.judge_run,
            s,
            kn,
            cl,
            perfect,
        };
    }
    let (mut s, mut kn, mut cl) = (0u32, 0u32, 0u32);
    for (n, it) in j.items.iter().enumerate() {
        s += it.score;
        let item = match q.checklist.get(n) {
            Some(c) if unique_ids && c.id == it.id => Some(c),
            _ => q.checklist.iter().find(|c| c.id == it.id),
        };
        match item.map(|c| c.kind) {
            Some(ItemKind::Knowledge) => kn += it.score,
            Some(ItemKind::Clarity) => cl += it.score,
            None => {}
        }
    }
    Cell {
        q: q_index,
        attempt: j.attempt,
        run: j.judge_run,
        s: f64::from(s),
        kn: f64::from(kn),
        cl: f64::from(cl),
        perfect: s == crate::model::FULL_SCORE,
    }
}

/// Every (model, judge) grid of the dataset, keyed and sorted by (model, judge).
/// For each model, which questions (by index) it has an answer record for, failed runs included.
pub fn answered_questions<'d>(ds: &'d Dataset, index: &Index<'d>) -> HashMap<&'d str, Vec<bool>> {
    let mut out: HashMap<&str, Vec<bool>> = HashMap::default();
    for a in &ds.answers {
        if let Some(&qi) = index.by_id.get(a.question_id.as_str()) {
            out.entry(a.model.as_str())
                .or_insert_with(|| vec![false; index.questions.len()])[qi as usize] = true;
        }
    }
    out
}

pub fn grids<'d>(
    ds: &'d Dataset,
    index: &Index<'d>,
    weights: &Resolved,
) -> BTreeMap<(&'d str, &'d str), Grid<'d>> {
    // Found by hash while filled (one lookup per judgment), sorted once at the end.
    let mut slot: HashMap<(&str, &str), usize> = HashMap::default();
    let mut filled: Vec<Grid> = Vec::new();
    let unique_ids: Vec<bool> = index
        .questions
        .iter()
        .map(|q| {
            q.checklist
                .iter()
                .enumerate()
                .all(|(n, c)| q.checklist[..n].iter().all(|d| d.id != c.id))
        })
        .collect();
    for j in &ds.judgments {
        let Some(&qi) = index.by_id.get(j.question_id.as_str()) else {
            continue;
        };
        let i = *slot
            .entry((j.model.as_str(), j.judge.as_str()))
            .or_insert_with(|| {
                filled.push(Grid {
                    model: &j.model,
                    judge: &j.judge,
                    attempts: BTreeSet::new(),
                    runs: BTreeSet::new(),
                    cells: Vec::new(),
                });
                filled.len() - 1
            });
        let g = &mut filled[i];
        g.attempts.insert(j.attempt);
        g.runs.insert(j.judge_run);
        g.cells.push(cell(
            j,
            qi,
            index.questions[qi as usize],
            unique_ids[qi as usize],
            weights,
        ));
    }
    let mut out: BTreeMap<(&str, &str), Grid> = filled
        .into_iter()
        .map(|g| ((g.model, g.judge), g))
        .collect_map();
    // An answered attempt that was never judged (or failed) is still part of the grid.
    let mut answer_attempts: HashMap<&str, BTreeSet<u32>> = HashMap::default();
    for a in &ds.answers {
        if index.by_id.contains_key(a.question_id.as_str()) {
            answer_attempts
                .entry(a.model.as_str())
                .or_default()
                .insert(a.attempt);
        }
    }
    for g in out.values_mut() {
        if let Some(at) = answer_attempts.get(g.model) {
            g.attempts.extend(at.iter().copied());
        }
        g.cells.shared_sort_by_key(|c| (c.q, c.attempt, c.run));
    }
    out
}
