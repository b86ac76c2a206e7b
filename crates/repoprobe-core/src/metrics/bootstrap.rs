//! The 95 % bootstrap confidence interval of a model's Overall and the paired comparison of two
//! models (beyond the paper). Questions are resampled with replacement; the resamples are drawn
//! once from the seed and shared by every model (common random numbers), so a model's interval
//! depends only on the seed, the benchmark and its own judgments, never on which other models
//! are loaded, and comparisons are paired.

use super::grid::{Grid, MissingPolicy, Tally};
use super::score_report::Paired;
use super::stats;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// B resamples of question indices (each of length n).
#[derive(Debug, Clone)]
pub struct Resamples {
    n: usize,
    draws: Vec<u32>,
}

impl Resamples {
    /// `None` when there is nothing to resample or no resamples are asked for.
    pub fn new(questions: usize, b: u32, seed: u64) -> Option<Self> {
        if questions == 0 || b == 0 || questions > u32::MAX as usize {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // u32 draws: sampling a usize range differs between 32-bit wasm and 64-bit native.
        let n = questions as u32;
        let draws = (0..b as usize * questions)
            .map(|_| rng.random_range(0..n))
            .collect();
        Some(Resamples {
            n: questions,
            draws,
        })
    }

    fn each(&self) -> impl Iterator<Item = &[u32]> {
        self.draws.chunks_exact(self.n)
    }

    /// Percentile interval of Overall over the resamples.
    pub fn overall_ci(&self, per_q: &[Tally], p: MissingPolicy) -> Option<[f64; 2]> {
        let mut values: Vec<f64> = self
            .each()
            .filter_map(|sample| {
                let mut t = Tally::default();
                sample.iter().for_each(|&q| t.merge(&per_q[q as usize]));
                t.overall(p)
            })
            .collect();
        interval(&mut values)
    }
}

fn interval(values: &mut [f64]) -> Option<[f64; 2]> {
    values.sort_unstable_by(f64::total_cmp);
    Some([
        stats::quantile_sorted(values, 0.025)?,
        stats::quantile_sorted(values, 0.975)?,
    ])
}

/// Mean over `qs` of the per-question difference A − B in percentage points; questions where
/// either side has no defined mean are skipped (only possible under `exclude`).
fn mean_diff<'a>(
    qs: impl Iterator<Item = &'a u32>,
    a: &[Tally],
    b: &[Tally],
    p: MissingPolicy,
) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0u64);
    for &q in qs {
        if let (Some(x), Some(y)) = (a[q as usize].overall(p), b[q as usize].overall(p)) {
            sum += x - y;
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// Paired comparison of two models of the same judge over the same questions.
pub fn paired(
    a: &Grid<'_>,
    b: &Grid<'_>,
    nq: usize,
    p: MissingPolicy,
    resamples: Option<&Resamples>,
) -> Paired {
    let ta = a.per_question_tallies(nq);
    let tb = b.per_question_tallies(nq);
    let all: Vec<u32> = (0..nq as u32).collect();
    let questions = all
        .iter()
        .filter(|&&q| ta[q as usize].overall(p).is_some() && tb[q as usize].overall(p).is_some())
        .count();
    let diff = mean_diff(all.iter(), &ta, &tb, p);
    let (ci95, a_better_pct) = match resamples {
        Some(r) => {
            let mut values: Vec<f64> = r
                .each()
                .filter_map(|s| mean_diff(s.iter(), &ta, &tb, p))
                .collect();
            let better = values.iter().filter(|&&d| d > 0.0).count();
            let pct = (!values.is_empty()).then(|| 100.0 * better as f64 / values.len() as f64);
            (interval(&mut values), pct)
        }
        None => (None, None),
    };
    Paired {
        a: a.model.to_string(),
        b: b.model.to_string(),
        judge: a.judge.to_string(),
        questions,
        mean_diff: diff,
        ci95,
        a_better_pct,
    }
}
