//! Per checklist item: how often models attain it, and how often judge runs agree on it
//! (beyond the paper). Attainment is over the judgments given (missing cells are not items
//! missed); agreement is the pairwise exact-agreement rate between judge runs of one answer.

use super::grid::Grid;
use super::index::Index;
use crate::dataset::Dataset;
use crate::model::ItemKind;
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
                        .collect()
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
