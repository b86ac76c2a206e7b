//! Retrieval, per model (docs/metrics.md#retrieval): did the agent read the files where the
//! answer is written, and did reading them go with a better verdict? The evidence paths of the
//! checklist items (docs/format.md#question) against the paths each run read
//! (`agent.files_read`, docs/format.md#answer), both normalised by [`repo_path`].
//!
//! Only **counted runs** enter: answers without `error`, whose question has at least one
//! evidence path, whose `files_read` is present (an empty list counts: it read nothing; an
//! absent one is not known and is left out, never taken as "read nothing").

use super::grid::{self, Index};
use super::stats::mean;
use super::weights::Resolved;
use crate::dataset::Dataset;
use crate::model::agent::AgentBlock;
use crate::model::{ChecklistItem, FailureMode, ItemKind, Judgment, Question, repo_path};
use crate::sort::CollectTree;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One model's retrieval, under the judge in force. Percentages are unrounded (0–100); a value
/// with nothing to average is `None`, never 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RetrievalRow {
    pub model: String,
    /// The judge in force, whose judgments the attainments and failures use.
    pub judge: Option<String>,
    /// Counted runs (see the module's comment).
    pub runs: usize,
    /// Mean over counted runs of |E ∩ R| / |E|: the share of the question's evidence read.
    pub evidence_recall: Option<f64>,
    /// Mean over counted runs that read something of |E ∩ R| / |R|: the share of what was read
    /// that is evidence.
    pub read_precision: Option<f64>,
    /// Knowledge items with evidence whose evidence was read at least in part, over all such
    /// items of all counted runs.
    pub items_retrieved: Option<f64>,
    /// Mean of score ÷ weight over (counted run, judgment, knowledge item with evidence) whose
    /// item was retrieved.
    pub attainment_retrieved: Option<f64>,
    /// The same over items not retrieved.
    pub attainment_not_retrieved: Option<f64>,
    /// (Counted run, judgment) cells whose Overall is below 60 % (the classifier's threshold).
    pub failures: usize,
    /// Percent of those failures whose run read no evidence path of its question.
    pub failures_not_retrieved: Option<f64>,
    /// Failure-mode labels (the classifier in force) on counted runs; `None` without labels.
    pub labelled_failures: Option<usize>,
    /// Of those labels, how many are `context_miss`.
    pub context_miss: Option<usize>,
    /// Of the `context_miss` labels, how many are on runs that read no evidence path.
    pub context_miss_not_retrieved: Option<usize>,
}

/// A question's evidence: the union of its items' (each item's is [`item_evidence`]).
struct Evidence<'d> {
    all: BTreeSet<&'d str>,
}

impl<'d> Evidence<'d> {
    fn of(q: &'d Question) -> Evidence<'d> {
        let all = q.checklist.iter().flat_map(item_evidence).collect_set();
        Evidence { all }
    }
}

/// A checklist item's evidence paths as retrieval counts them: a knowledge item's, none for a
/// clarity item.
fn item_evidence(c: &ChecklistItem) -> BTreeSet<&str> {
    match c.kind {
        ItemKind::Knowledge => c.evidence.iter().map(|e| e.path.as_str()).collect_set(),
        ItemKind::Clarity => BTreeSet::new(),
    }
}

/// Whether a run that read `read` (see [`files_read`]) retrieved `item`: some evidence path of
/// the item among them; `None` for an item without evidence. The one definition of "retrieved"
/// (the rows below and the site's checklist both use it).
pub fn item_retrieved(item: &ChecklistItem, read: &BTreeSet<String>) -> Option<bool> {
    let e = item_evidence(item);
    (!e.is_empty()).then(|| e.iter().any(|p| read.contains(*p)))
}

/// The paths a run read, normalised, each once; `None` when the answer does not say.
pub fn files_read(block: &AgentBlock) -> Option<BTreeSet<String>> {
    let read = block.files_read.as_ref()?;
    Some(
        read.iter()
            .filter_map(|p| repo_path::normalise(p).ok())
            .collect_set(),
    )
}

/// What one model's counted runs add up to, before the divisions.
#[derive(Default)]
struct Sums {
    runs: usize,
    recall: Vec<f64>,
    precision: Vec<f64>,
    items: usize,
    items_read: usize,
    attained: Vec<f64>,
    missed: Vec<f64>,
    failures: usize,
    failures_unread: usize,
    labelled: usize,
    context_miss: usize,
    context_miss_unread: usize,
}

/// Sorted, then averaged, in percent: no input order changes a digit.
fn pct_mean(mut v: Vec<f64>) -> Option<f64> {
    v.sort_unstable_by(f64::total_cmp);
    mean(&v).map(|m| 100.0 * m)
}

fn pct(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| 100.0 * num as f64 / den as f64)
}

/// Where the rows come from: the judge whose judgments count, the classifier whose labels do,
/// the models in the order of the leaderboard's rows.
pub struct Inputs<'a> {
    pub judge: Option<&'a str>,
    pub classifier: Option<&'a str>,
    pub leaderboard: &'a [&'a str],
}

/// One row per model that has answer records or a leaderboard row (leaderboard order, then the
/// others by name); no rows at all when no question has evidence, so data without any says
/// nothing rather than a table of "not measured".
pub fn rows(ds: &Dataset, index: &Index<'_>, weights: &Resolved, at: &Inputs) -> Vec<RetrievalRow> {
    let evidence: Vec<Evidence> = index.questions.iter().map(|q| Evidence::of(q)).collect();
    if evidence.iter().all(|e| e.all.is_empty()) {
        return Vec::new();
    }
    let judgments = judgments_by_answer(ds, at.judge);
    let labels = labels_by_answer(ds, at.classifier);
    let mut sums: BTreeMap<&str, Sums> = BTreeMap::new();
    for a in &ds.answers {
        let model_sums = sums.entry(a.model.as_str()).or_default();
        let Some(&qi) = index.by_id.get(a.question_id.as_str()) else {
            continue;
        };
        let (q, e) = (index.questions[qi as usize], &evidence[qi as usize]);
        if a.error.is_some() || e.all.is_empty() {
            continue;
        }
        let Some(read) = AgentBlock::of(a).and_then(files_read) else {
            continue;
        };
        let s = model_sums;
        s.runs += 1;
        let hit = e.all.iter().filter(|p| read.contains(**p)).count();
        s.recall.push(hit as f64 / e.all.len() as f64);
        if !read.is_empty() {
            s.precision.push(hit as f64 / read.len() as f64);
        }
        let retrieved: Vec<Option<bool>> = q
            .checklist
            .iter()
            .map(|c| item_retrieved(c, &read))
            .collect();
        s.items += retrieved.iter().flatten().count();
        s.items_read += retrieved.iter().flatten().filter(|&&r| r).count();

        let key = (a.question_id.as_str(), a.model.as_str(), a.attempt);
        for j in judgments.get(&key).into_iter().flatten() {
            s.add_judgment(j, (qi, q), &retrieved, hit, weights);
        }
        if let Some(&mode) = labels.get(&key) {
            s.labelled += 1;
            if mode == FailureMode::ContextMiss {
                s.context_miss += 1;
                s.context_miss_unread += usize::from(hit == 0);
            }
        }
    }

    let mut order: Vec<&str> = Vec::new();
    for m in at.leaderboard.iter().copied().chain(sums.keys().copied()) {
        if !order.contains(&m) {
            order.push(m);
        }
    }
    order
        .into_iter()
        .map(|model| sums.remove(model).unwrap_or_default().row(model, at))
        .collect()
}

/// An answer record's key: (question, model, attempt).
type AnswerKey<'d> = (&'d str, &'d str, u32);

/// The judge's judgments of each answer (none without a judge in force).
fn judgments_by_answer<'d>(
    ds: &'d Dataset,
    judge: Option<&str>,
) -> BTreeMap<AnswerKey<'d>, Vec<&'d Judgment>> {
    let mut judgments: BTreeMap<AnswerKey<'d>, Vec<&Judgment>> = BTreeMap::new();
    if let Some(judge) = judge {
        for j in ds.judgments.iter().filter(|j| j.judge == judge) {
            judgments
                .entry((j.question_id.as_str(), j.model.as_str(), j.attempt))
                .or_default()
                .push(j);
        }
    }
    judgments
}

/// The classifier's failure mode of each answer it labelled (none without a classifier).
fn labels_by_answer<'d>(
    ds: &'d Dataset,
    classifier: Option<&str>,
) -> BTreeMap<AnswerKey<'d>, FailureMode> {
    let Some(c) = classifier else {
        return BTreeMap::new();
    };
    ds.failure_labels
        .iter()
        .filter(|l| l.classifier == c)
        .map(|l| {
            (
                (l.question_id.as_str(), l.model.as_str(), l.attempt),
                l.mode,
            )
        })
        .collect_map()
}

impl Sums {
    /// A judgment of a counted run of question `q` (index `qi`), whose items were `retrieved`
    /// or not and whose evidence had `hit` paths read: a failure (read nothing or not), and the
    /// attainment of each item of non-zero weight, as retrieved or not.
    fn add_judgment(
        &mut self,
        j: &Judgment,
        (qi, q): (u32, &Question),
        retrieved: &[Option<bool>],
        hit: usize,
        weights: &Resolved,
    ) {
        if grid::cell(j, qi, q, false, weights).fails() {
            self.failures += 1;
            self.failures_unread += usize::from(hit == 0);
        }
        let in_force = weights.of(qi);
        for (n, (item, was_read)) in q.checklist.iter().zip(retrieved).enumerate() {
            let weight = in_force
                .and_then(|w| w.get(n).copied())
                .unwrap_or(item.weight);
            let (Some(was_read), true) = (was_read, weight > 0 && item.weight > 0) else {
                continue;
            };
            let Some(score) = j.items.iter().find(|it| it.id == item.id) else {
                continue;
            };
            let attainment = f64::from(score.score) / f64::from(item.weight);
            if *was_read {
                self.attained.push(attainment);
            } else {
                self.missed.push(attainment);
            }
        }
    }

    /// The model's row: the sums' means and shares.
    fn row(self, model: &str, at: &Inputs) -> RetrievalRow {
        let labelled = at.classifier.is_some();
        RetrievalRow {
            model: model.to_string(),
            judge: at.judge.map(str::to_string),
            runs: self.runs,
            evidence_recall: pct_mean(self.recall),
            read_precision: pct_mean(self.precision),
            items_retrieved: pct(self.items_read, self.items),
            attainment_retrieved: pct_mean(self.attained),
            attainment_not_retrieved: pct_mean(self.missed),
            failures: self.failures,
            failures_not_retrieved: pct(self.failures_unread, self.failures),
            labelled_failures: labelled.then_some(self.labelled),
            context_miss: labelled.then_some(self.context_miss),
            context_miss_not_retrieved: labelled.then_some(self.context_miss_unread),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SourceFile;
    use serde_json::{Value, json};

    const BENCH: &str = include_str!("../../../../testdata/golden/benchmark.jsonl");

    /// The golden benchmark's q1 and q2, q1's k1 with `evidence` (k2 and q2 without), and these
    /// records beside it.
    fn dataset(evidence: Value, records: &[Value]) -> Dataset {
        let mut lines: Vec<String> = BENCH
            .lines()
            .take(2)
            .enumerate()
            .map(|(n, l)| {
                let mut q: Value = serde_json::from_str(l).unwrap();
                if n == 0 {
                    q["checklist"][0]["evidence"] = evidence.clone();
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

    fn answer(model: &str, read: Option<Value>) -> Value {
        let mut a = json!({"question_id": "q1", "model": model, "answer": "a", "agent": {}});
        if let Some(r) = read {
            a["agent"]["files_read"] = r;
        }
        a
    }

    fn judgment(model: &str, k1: u32, k2: u32) -> Value {
        json!({"question_id": "q1", "model": model, "judge": "J", "items": [
            {"id": "k1", "score": k1}, {"id": "k2", "score": k2}, {"id": "clarity", "score": 1}]})
    }

    fn rows_of(ds: &Dataset, judge: Option<&str>, classifier: Option<&str>) -> Vec<RetrievalRow> {
        let index = Index::new(ds);
        let weights = Resolved::new(&[], &index, true).unwrap();
        rows(
            ds,
            &index,
            &weights,
            &Inputs {
                judge,
                classifier,
                leaderboard: &[],
            },
        )
    }

    #[test]
    fn without_any_evidence_there_are_no_rows() {
        let ds = dataset(Value::Null, &[answer("A", Some(json!(["a.py"])))]);
        assert!(rows_of(&ds, None, None).is_empty());
    }

    #[test]
    fn a_run_that_does_not_say_what_it_read_is_not_counted_and_its_model_is_not_measured() {
        let mut failed = answer("A", Some(json!(["a.py"])));
        failed["error"] = "timeout".into();
        failed["attempt"] = 1.into();
        let ds = dataset(json!(["a.py"]), &[answer("A", None), failed]);
        let r = &rows_of(&ds, Some("J"), None)[0];
        assert_eq!(
            *r,
            RetrievalRow {
                model: "A".into(),
                judge: Some("J".into()),
                ..RetrievalRow::default()
            }
        );
    }

    #[test]
    fn a_run_that_read_nothing_has_a_recall_of_zero_and_no_precision() {
        let ds = dataset(
            json!(["a.py", "b.py"]),
            &[answer("A", Some(json!([]))), judgment("A", 0, 0)],
        );
        let r = &rows_of(&ds, Some("J"), None)[0];
        assert_eq!(r.runs, 1);
        assert_eq!(r.evidence_recall, Some(0.0));
        assert_eq!(r.read_precision, None);
        assert_eq!(r.items_retrieved, Some(0.0));
        assert_eq!(r.attainment_retrieved, None);
        assert_eq!(r.attainment_not_retrieved, Some(0.0));
        assert_eq!((r.failures, r.failures_not_retrieved), (1, Some(100.0)));
        assert_eq!(r.labelled_failures, None, "no labels: not measured, not 0");
    }

    #[test]
    fn without_a_judge_there_is_nothing_to_attain_and_no_failure_to_share() {
        let ds = dataset(
            json!(["a.py"]),
            &[answer("A", Some(json!(["./a.py", "a.py", "/x"])))],
        );
        let r = &rows_of(&ds, None, None)[0];
        assert_eq!(r.runs, 1);
        assert_eq!(r.evidence_recall, Some(100.0));
        assert_eq!(
            r.read_precision,
            Some(100.0),
            "duplicates once, invalid paths dropped"
        );
        assert_eq!(
            (r.attainment_retrieved, r.attainment_not_retrieved),
            (None, None)
        );
        assert_eq!((r.failures, r.failures_not_retrieved), (0, None));
    }

    #[test]
    fn labels_are_counted_on_counted_runs_only() {
        let label = |model: &str, mode: &str| json!({"question_id": "q1", "model": model, "classifier": "C", "mode": mode});
        let ds = dataset(
            json!(["a.py"]),
            &[
                answer("A", Some(json!(["b.py"]))),
                answer("B", None),
                label("A", "context_miss"),
                label("B", "context_miss"),
            ],
        );
        let r = rows_of(&ds, None, Some("C"));
        assert_eq!(
            (
                r[0].labelled_failures,
                r[0].context_miss,
                r[0].context_miss_not_retrieved
            ),
            (Some(1), Some(1), Some(1))
        );
        assert_eq!(
            (
                r[1].labelled_failures,
                r[1].context_miss,
                r[1].context_miss_not_retrieved
            ),
            (Some(0), Some(0), Some(0)),
            "labels exist, none on a counted run of B"
        );
    }

    #[test]
    fn rows_follow_the_leaderboard_then_the_other_models_by_name() {
        let ds = dataset(
            json!(["a.py"]),
            &[answer("Z", None), answer("A", None), answer("M", None)],
        );
        let index = Index::new(&ds);
        let weights = Resolved::new(&[], &index, true).unwrap();
        let r = rows(
            &ds,
            &index,
            &weights,
            &Inputs {
                judge: None,
                classifier: None,
                leaderboard: &["M", "Q"],
            },
        );
        let order: Vec<&str> = r.iter().map(|r| r.model.as_str()).collect();
        assert_eq!(order, ["M", "Q", "A", "Z"]);
    }
}
