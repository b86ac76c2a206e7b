//! The 95 % bootstrap confidence interval of a model's Overall (beyond the paper), under
//! `ci = bootstrap`. Whole clusters (repositories, or questions) are resampled with
//! replacement; the resamples are drawn once from the seed and shared by every model (common
//! random numbers), so a model's interval depends only on the seed, the benchmark and its own
//! judgments, never on which other models are loaded, and comparisons (`paired.rs`) are paired.

use super::grid::{MissingPolicy, Tally};
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

    /// Each resample's unit indices, in the order drawn.
    pub fn each(&self) -> impl Iterator<Item = &[u32]> {
        self.draws.chunks_exact(self.n)
    }

    /// Percentile interval of Overall over the resamples, `per_q` the sums of each unit
    /// resampled (a cluster's, or a question's).
    pub fn overall_ci(&self, per_q: &[Tally], p: MissingPolicy) -> Option<[f64; 2]> {
        // Overall reads only the cells, the grid and the sum of s: each resample sums those
        // alone, four resamples side by side — each its own additions in its own order (the
        // very numbers of one at a time), but four independent chains of additions instead of
        // one that waits on every floating-point add.
        let sum = |t: &mut Tally, q: u32| {
            let c = &per_q[q as usize];
            t.filled += c.filled;
            t.grid += c.grid;
            t.s += c.s;
        };
        let mut values = Vec::with_capacity(self.draws.len() / self.n);
        let mut fours = self.draws.chunks_exact(4 * self.n);
        for four in &mut fours {
            let (a, rest) = four.split_at(self.n);
            let (b, rest) = rest.split_at(self.n);
            let (c, d) = rest.split_at(self.n);
            let mut t = [Tally::default(); 4];
            for (((&qa, &qb), &qc), &qd) in a.iter().zip(b).zip(c).zip(d) {
                sum(&mut t[0], qa);
                sum(&mut t[1], qb);
                sum(&mut t[2], qc);
                sum(&mut t[3], qd);
            }
            values.extend(t.iter().filter_map(|t| t.overall(p)));
        }
        for sample in fours.remainder().chunks_exact(self.n) {
            let mut t = Tally::default();
            sample.iter().for_each(|&q| sum(&mut t, q));
            values.extend(t.overall(p));
        }
        interval(&mut values)
    }
}

/// The 95 % percentile interval (2.5 % and 97.5 % quantiles) of bootstrap values.
pub(crate) fn interval(values: &mut [f64]) -> Option<[f64; 2]> {
    values.sort_unstable_by(f64::total_cmp);
    Some([
        stats::quantile_sorted(values, 0.025)?,
        stats::quantile_sorted(values, 0.975)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four resamples at a time give, to the bit, the interval of one resample at a time (the
    /// whole tally merged), whatever B is left over.
    #[test]
    fn overall_ci_is_that_of_one_resample_at_a_time() {
        let per_q: Vec<Tally> = (0..37u32)
            .map(|i| Tally {
                filled: u64::from(i % 3),
                grid: 2,
                s: f64::from(i) * 0.37 + 1.0 / f64::from(i + 3),
                kn: f64::from(i) * 0.1,
                cl: f64::from(i % 2),
                perfect: u64::from(i % 5 == 0),
            })
            .collect();
        for b in [1, 2, 3, 4, 5, 7, 8, 9, 100, 1001] {
            let r = Resamples::new(per_q.len(), b, 11).unwrap();
            for p in [MissingPolicy::Zero, MissingPolicy::Exclude] {
                let mut values: Vec<f64> = r
                    .each()
                    .filter_map(|sample| {
                        let mut t = Tally::default();
                        sample.iter().for_each(|&q| t.merge(&per_q[q as usize]));
                        t.overall(p)
                    })
                    .collect();
                let want = interval(&mut values).map(|v| v.map(f64::to_bits));
                let got = r.overall_ci(&per_q, p).map(|v| v.map(f64::to_bits));
                assert_eq!(got, want, "B = {b}, {p:?}");
            }
        }
    }
}
