//! Table 4: per stratum (category, theme or language), each model's Overall and Perfect over
//! that stratum's questions, then their mean and sample std across models.

use super::grid::{Grid, MissingPolicy, Tally};
use super::index::Index;
use super::score_report::{Stratum, StratumCell, StratumRow};
use super::stats;
use std::collections::BTreeMap;

/// One row per stratum value, sorted by name.
pub fn rows(
    axis: Stratum,
    index: &Index<'_>,
    judged: &[&Grid<'_>],
    p: MissingPolicy,
) -> Vec<StratumRow> {
    // Question indices of each stratum value.
    let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, q) in index.questions.iter().enumerate() {
        members.entry(axis.of(q)).or_default().push(i);
    }
    let nq = index.questions.len();
    let per_model: Vec<(&str, Vec<Tally>)> = judged
        .iter()
        .map(|g| (g.model, g.per_question_tallies(nq)))
        .collect();

    members
        .into_iter()
        .map(|(name, qs)| {
            let mut cells = BTreeMap::new();
            let (mut overall, mut perfect) = (Vec::new(), Vec::new());
            for (model, tallies) in &per_model {
                let mut t = Tally::default();
                qs.iter().for_each(|&q| t.merge(&tallies[q]));
                let cell = StratumCell {
                    overall: t.overall(p),
                    perfect: t.perfect_rate(p),
                };
                // Models without a defined value here (exclude policy, nothing judged) are left
                // out of the statistics rather than counted as zero.
                overall.extend(cell.overall);
                perfect.extend(cell.perfect);
                cells.insert(model.to_string(), cell);
            }
            StratumRow {
                stratum: name.to_string(),
                questions: qs.len(),
                mean: stats::mean(&overall),
                std: stats::sample_std(&overall),
                perfect_mean: stats::mean(&perfect),
                perfect_std: stats::sample_std(&perfect),
                per_model: cells,
            }
        })
        .collect()
}
