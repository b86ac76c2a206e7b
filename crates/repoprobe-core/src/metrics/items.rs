//! Per checklist item: how often models attain it, and how often judge runs agree on it
//! (beyond the paper). Attainment is over the judgments given (missing cells are not items
//! missed); agreement is the pairwise exact-agreement rate between judge runs of one answer.

use super::grid::Grid;
use super::index::Index;
use crate::dataset::Dataset;
use crate::model::{ChecklistItem, ItemKind, Judgment};
use crate::sort::CollectTree;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemRow {
    pub question_id: String,
    pub item_id: String,
    pub kind: ItemKind,
    pub weight: u32,
    pub judgments: usize,
    /// Mean of score / weight over all models' judgments, in percent.
    pub attainment: Option<f64>,
    pub per_model: BTreeMap<String, f64>,
    /// Pairs of judge runs of the same answer compared, and the share that gave the same score.
    pub agreement_pairs: u64,
    pub agreement: Option<f64>,
}

#[derive(Default)]
struct Acc {
    sum: u64,
    n: u64,
}

/// One row per (question, item) in question-id then checklist order, for the judge in force.
pub fn rows(ds: &Dataset, index: &Index<'_>, judged: &[&Grid<'_>]) -> Vec<ItemRow> {
    let judge = judged.first().map(|g| g.judge);
    // (question index, item position) -> per model sums; and -> scores per (model, attempt).
    let mut attain: BTreeMap<(u32, usize), BTreeMap<&str, Acc>> = BTreeMap::new();
    let mut runs: BTreeMap<(u32, usize, &str, u32), Vec<u32>> = BTreeMap::new();
    for j in ds
        .judgments
        .iter()
        .filter(|j| Some(j.judge.as_str()) == judge)
    {
        let Some(&qi) = index.by_id.get(j.question_id.as_str()) else {
            continue;
        };
        let q = index.questions[qi as usize];
        for it in &j.items {
            let Some(pos) = q.checklist.iter().position(|c| c.id == it.id) else {
                continue;
            };
            let acc = attain
                .entry((qi, pos))
                .or_default()
                .entry(j.model.as_str())
                .or_default();
            acc.sum += u64::from(it.score);
            acc.n += 1;
            runs.entry((qi, pos, j.model.as_str(), j.attempt))
                .or_default()
                .push(it.score);
        }
    }
    let mut agree: BTreeMap<(u32, usize), (u64, u64)> = BTreeMap::new();
    for ((qi, pos, _, _), scores) in &runs {
        let e = agree.entry((*qi, *pos)).or_default();
        for x in 0..scores.len() {
            for y in x + 1..scores.len() {
                e.0 += 1;
                e.1 += u64::from(scores[x] == scores[y]);
            }
        }
    }
    let mut out = Vec::new();
    for (qi, q) in index.questions.iter().enumerate() {
        for (pos, item) in q.checklist.iter().enumerate() {
            let key = (qi as u32, pos);
            let w = f64::from(item.weight.max(1));
            let per = attain.get(&key);
            let (mut sum, mut n) = (0u64, 0u64);
            let per_model = per
                .map(|m| {
                    m.iter()
                        .map(|(model, a)| {
                            sum += a.sum;
                            n += a.n;
                            (model.to_string(), 100.0 * a.sum as f64 / (a.n as f64 * w))
                        })
                        .collect_map()
                })
                .unwrap_or_default();
            let (pairs, same) = agree.get(&key).copied().unwrap_or((0, 0));
            out.push(ItemRow {
                question_id: q.id.clone(),
                item_id: item.id.clone(),
                kind: item.kind,
                weight: item.weight,
                judgments: n as usize,
                attainment: (n > 0).then(|| 100.0 * sum as f64 / (n as f64 * w)),
                per_model,
                agreement_pairs: pairs,
                agreement: (pairs > 0).then(|| 100.0 * same as f64 / pairs as f64),
            });
        }
    }
    out
}

/// The pooled exact agreement of judge runs over `rows` (those with an agreement, in their
/// order): the pairs of judge runs compared, and the share of them, in percent, that gave the
/// same score (`None` when no pair was compared). The Reliability view's sentence above its
/// per-item table.
pub fn pooled_agreement(rows: &[ItemRow]) -> (u64, Option<f64>) {
    let agreed = || rows.iter().filter(|i| i.agreement.is_some());
    let pairs: u64 = agreed().map(|i| i.agreement_pairs).sum();
    let same: f64 = agreed()
        .map(|i| i.agreement.unwrap_or(0.0) / 100.0 * i.agreement_pairs as f64)
        .sum();
    (pairs, (pairs > 0).then(|| 100.0 * same / pairs as f64))
}

/// One answer's scores, each the mean over its judge runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeans {
    /// Per checklist item, in checklist order (a run that did not score an item counts 0).
    pub items: Vec<f64>,
    /// Of the total s (0–10).
    pub total: f64,
}

/// The mean over `runs` (the judge runs of one answer) of each of `checklist`'s items and of
/// the total: the case studies' table (the leaderboard on a case-study set). `None` without
/// runs.
pub fn mean_over_runs(runs: &[&Judgment], checklist: &[ChecklistItem]) -> Option<RunMeans> {
    let mean_of = |f: &dyn Fn(&Judgment) -> u32| {
        let values: Vec<f64> = runs.iter().map(|j| f64::from(f(j))).collect();
        super::stats::mean(&values)
    };
    let items = checklist
        .iter()
        .map(|it| {
            mean_of(&|j: &Judgment| {
                j.items
                    .iter()
                    .find(|x| x.id == it.id)
                    .map_or(0, |x| x.score)
            })
        })
        .collect::<Option<Vec<f64>>>()?;
    Some(RunMeans {
        items,
        total: mean_of(&Judgment::total)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemScore;

    fn row(pairs: u64, agreement: Option<f64>) -> ItemRow {
        ItemRow {
            question_id: "q".into(),
            item_id: "k1".into(),
            kind: ItemKind::Knowledge,
            weight: 3,
            judgments: 2,
            attainment: None,
            per_model: BTreeMap::new(),
            agreement_pairs: pairs,
            agreement,
        }
    }

    #[test]
    fn pooled_agreement_weighs_each_item_by_its_pairs() {
        // 1 pair of 1 agreed, 3 pairs of which 1 agreed: 2 of 4 pairs, 50 %.
        let rows = [row(1, Some(100.0)), row(3, Some(100.0 / 3.0)), row(5, None)];
        let (pairs, pct) = pooled_agreement(&rows);
        assert_eq!(pairs, 4);
        assert!((pct.unwrap() - 50.0).abs() < 1e-9, "{pct:?}");
        assert_eq!(pooled_agreement(&[row(0, None)]), (0, None));
    }

    fn judgment(run: u32, scores: &[(&str, u32)]) -> Judgment {
        Judgment {
            question_id: "q".into(),
            model: "m".into(),
            attempt: 0,
            judge: "J".into(),
            judge_run: run,
            items: scores
                .iter()
                .map(|(id, score)| ItemScore {
                    id: (*id).into(),
                    rationale: String::new(),
                    score: *score,
                })
                .collect(),
        }
    }

    #[test]
    fn mean_over_runs_is_per_item_and_of_the_total_a_missing_item_counting_0() {
        let item = |id| crate::fixtures::item(id, ItemKind::Knowledge, 3, &[0, 1, 2, 3]);
        let checklist = [item("k1"), item("k2")];
        let (a, b) = (
            judgment(0, &[("k1", 3), ("k2", 1)]),
            judgment(1, &[("k1", 2)]),
        );
        let m = mean_over_runs(&[&a, &b], &checklist).unwrap();
        assert_eq!(m.items, [2.5, 0.5]);
        assert_eq!(m.total, 3.0);
        assert_eq!(mean_over_runs(&[], &checklist), None);
    }
}
