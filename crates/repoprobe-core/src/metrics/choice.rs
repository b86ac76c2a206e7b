//! What is in force for a report: the questions (a contamination window, dropped questions),
//! the judge of the one-judge views and the classifier of Table 7 — one rule each, for `score`,
//! the runs' rows and `classify-failures` alike.

use super::error::ScoreError;
use super::grid::Grid;
use super::index::Index;
use super::score_report::ScoreOptions;
use super::weights;
use crate::dataset::Dataset;
use crate::dataset::WindowError;
use std::collections::BTreeMap;

/// The dataset of the questions in force (those created on or after `opts.created_after`,
/// without `opts.drop_questions`) and the window's account; `None` when every question is.
pub(crate) fn in_force(
    ds: &Dataset,
    opts: &ScoreOptions,
) -> Result<Option<(Dataset, Option<crate::dataset::CreatedWindow>)>, ScoreError> {
    if opts.drop_questions.is_empty() && opts.created_after.is_none() {
        return Ok(None);
    }
    if let Some(id) = opts
        .drop_questions
        .iter()
        .find(|id| !ds.questions.iter().any(|q| &q.id == *id))
    {
        return Err(ScoreError::UnknownQuestion(id.clone()));
    }
    // The weight rules are checked against the whole benchmark: one naming a dropped
    // question, or one outside the window, is no typo.
    weights::Resolved::new(&opts.weights, &Index::new(ds), true)?;
    let mut outside = opts.drop_questions.clone();
    let window = match &opts.created_after {
        Some(date) => {
            let (before, w) = ds.created_window(date)?;
            if w.questions == 0 {
                return Err(ScoreError::Window(WindowError::Empty(w.sentence())));
            }
            outside.extend(before);
            Some(w)
        }
        None => None,
    };
    Ok(Some((ds.without_questions(&outside), window)))
}

/// The judge in force: the one asked for, else the one with the most valid judgments (ties go
/// to the name that sorts first).
pub(crate) fn choose_judge(
    grids: &BTreeMap<(&str, &str), Grid<'_>>,
    wanted: Option<&str>,
) -> Result<Option<String>, ScoreError> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for g in grids.values() {
        *counts.entry(g.judge).or_default() += g.cells.len();
    }
    pick_judge(counts, wanted)
}

/// The judge in force for the one-judge views (strata, reliability, items, failure modes,
/// `classify-failures`): `wanted` if it has valid judgments, else the judge with the most valid
/// judgments of known questions, ties going to the name that sorts first. One rule everywhere.
pub fn judge_in_force(ds: &Dataset, wanted: Option<&str>) -> Result<Option<String>, ScoreError> {
    let index = Index::new(ds);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for j in ds
        .judgments
        .iter()
        .filter(|j| index.by_id.contains_key(j.question_id.as_str()))
    {
        *counts.entry(j.judge.as_str()).or_default() += 1;
    }
    pick_judge(counts, wanted)
}

fn pick_judge(
    counts: BTreeMap<&str, usize>,
    wanted: Option<&str>,
) -> Result<Option<String>, ScoreError> {
    if let Some(w) = wanted {
        return if counts.contains_key(w) {
            Ok(Some(w.to_string()))
        } else {
            let present: Vec<String> = counts.keys().map(|k| format!("{k:?}")).collect();
            Err(ScoreError::UnknownJudge(
                w.to_string(),
                if present.is_empty() {
                    "none".into()
                } else {
                    present.join(", ")
                },
            ))
        };
    }
    let mut best: Option<(&str, usize)> = None;
    for (j, n) in counts {
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((j, n));
        }
    }
    Ok(best.map(|(j, _)| j.to_string()))
}

/// The classifier in force: the one with the most labels, ties going to the name that sorts
/// first (Table 7 and the Runs view's failure modes both use it).
pub fn classifier_in_force(ds: &Dataset) -> Option<&str> {
    let mut by_classifier: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &ds.failure_labels {
        *by_classifier.entry(l.classifier.as_str()).or_default() += 1;
    }
    let mut best: Option<(&str, usize)> = None;
    for (&c, &n) in &by_classifier {
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((c, n));
        }
    }
    best.map(|(c, _)| c)
}
