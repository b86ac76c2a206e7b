//! The distribution of total scores per (model, judge): how many judgments gave each total
//! s = 0…10 (the sum of the items' scores, 10 and over in the last bin), the low-score tail the
//! paper points out. Over the judgments of the questions in force, like every other number of
//! a report.

use crate::model::Judgment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One (model, judge)'s counts, `counts[s]` for s = 0…10.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreHistogram {
    pub model: String,
    pub judge: String,
    pub counts: Vec<usize>,
}

/// The bins of the histograms: totals 0…10.
pub const BINS: usize = 11;

/// Every (model, judge)'s histogram, in (model, judge) order.
pub fn histograms(judgments: &[Judgment]) -> Vec<ScoreHistogram> {
    let mut hist: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for j in judgments {
        let s: u64 = j.items.iter().map(|i| u64::from(i.score)).sum();
        hist.entry((&j.model, &j.judge))
            .or_insert_with(|| vec![0; BINS])[s.min(BINS as u64 - 1) as usize] += 1;
    }
    hist.into_iter()
        .map(|((m, j), counts)| ScoreHistogram {
            model: m.to_string(),
            judge: j.to_string(),
            counts,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemScore;

    fn judgment(model: &str, judge: &str, scores: &[u32]) -> Judgment {
        Judgment {
            question_id: "q".into(),
            model: model.into(),
            attempt: 0,
            judge: judge.into(),
            judge_run: 0,
            items: scores
                .iter()
                .enumerate()
                .map(|(i, &score)| ItemScore {
                    id: format!("k{i}"),
                    rationale: String::new(),
                    score,
                })
                .collect(),
        }
    }

    #[test]
    fn each_judgment_counts_once_in_the_bin_of_its_total_the_last_bin_holding_more() {
        let h = histograms(&[
            judgment("b", "J", &[2, 1]),
            judgment("a", "J", &[0]),
            judgment("a", "J", &[3, 3]),
            judgment("a", "J", &[u32::MAX, u32::MAX]),
            judgment("a", "K", &[5, 5, 5]),
        ]);
        let of = |m: &str, j: &str| {
            h.iter()
                .find(|x| x.model == m && x.judge == j)
                .unwrap()
                .counts
                .clone()
        };
        assert_eq!(h.len(), 3);
        assert_eq!(of("a", "J"), [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(of("a", "K"), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(of("b", "J"), [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    }
}
