//! How sure a model's numbers are (docs/metrics.md#clustered-uncertainty): the cluster-robust
//! standard error of each mean over the cells in force, the paired comparison of two models
//! with its power, the rank ranges those comparisons allow, and where the noise comes from.
//!
//! The cells in force of a (model, judge) are what Overall averages: question × attempt ×
//! judge run, a missing cell counting 0 under `missing = zero` and left out under `exclude`.
//! With x̄ their mean over N cells in C clusters,
//! SE = √( C/(C−1) · Σ_c (Σ_{i∈c} (x_i − x̄))² ) / N (Miller 2024, App. A; Inspect's
//! `stderr(cluster=…)`): with every cell its own cluster it is the plain sample SE.

use super::cluster::{Cluster, Clusters};
use super::grid::{Cell, Grid, MissingPolicy};
use serde::{Deserialize, Serialize};

/// The normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959964;
/// The normal quantile of 80 % power (one-sided).
pub const Z80: f64 = 0.841621;

/// The four means of Table 3 as per-cell values in points: Overall, Knowledge, Clarity,
/// Perfect.
type Values = [f64; 4];

fn values(c: &Cell) -> Values {
    [
        100.0 * c.s / f64::from(crate::model::FULL_SCORE),
        100.0 * c.kn / f64::from(crate::model::KNOWLEDGE_WEIGHT),
        100.0 * c.cl,
        if c.perfect { 100.0 } else { 0.0 },
    ]
}

/// Where a model's noise comes from, in points² (docs/metrics.md#variance-components); `None`
/// where undefined (fewer than two of what is compared).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Variance {
    /// Sample variance over questions of the per-question means.
    pub questions: Option<f64>,
    /// Mean over questions with ≥ 2 attempts of the sample variance of its attempts' means
    /// (each attempt's mean over its judge runs).
    pub attempts: Option<f64>,
    /// Mean over (question, attempt) with ≥ 2 judge runs of the sample variance over its runs.
    pub judge_runs: Option<f64>,
}

impl Variance {
    /// The standard error `se` (measured with `k0` attempts and `r0` judge runs per question)
    /// projected to `k` attempts and `r` judge runs (Miller 2024, §3–4): the per-question
    /// mean's variance is split into what the questions differ by, what attempts add (÷ K) and
    /// what judge runs add (÷ K·R); the clustering's design effect is kept as measured. A
    /// projection, not a measurement; `None` where a component it needs is undefined.
    pub fn projected_se(&self, se: f64, k0: usize, r0: usize, k: usize, r: usize) -> Option<f64> {
        if k0 == 0 || r0 == 0 || k == 0 || r == 0 {
            return None;
        }
        let q = self.questions?;
        let (k0, r0, k, r) = (k0 as f64, r0 as f64, k as f64, r as f64);
        let runs = if r0 > 1.0 || r > 1.0 {
            self.judge_runs?
        } else {
            self.judge_runs.unwrap_or(0.0)
        };
        let attempts = if k0 > 1.0 || k > 1.0 {
            self.attempts?
        } else {
            self.attempts.unwrap_or(runs / r0)
        };
        // attempts = σ²_attempt + σ²_run / r0; q = σ²_between + attempts / k0.
        let attempt = (attempts - runs / r0).max(0.0);
        let between = (q - attempts / k0).max(0.0);
        let now = q;
        let then = between + attempt / k + runs / (k * r);
        if now <= 0.0 {
            return Some(se);
        }
        Some(se * (then / now).sqrt())
    }
}

/// The SEs of one grid's four means, the clusters they fall in, and the variance components.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GridUncertainty {
    /// Overall, Knowledge, Clarity, Perfect.
    pub se: [Option<f64>; 4],
    pub clusters: usize,
    pub variance: Variance,
    /// The cells in force, by Overall's value, when asked for (`Cluster::None`'s bootstrap
    /// resamples them); empty otherwise.
    pub overall_cells: Vec<f64>,
}

/// Calls `f(q, cells, missing)` for every question of the grid in order: its judged cells, and
/// how many of its grid cells are missing (they count 0 under `zero`).
fn each_question<'g>(g: &'g Grid<'_>, nq: usize, mut f: impl FnMut(u32, &'g [Cell], u64)) {
    let per_q = g.per_question();
    let mut rest = g.cells.as_slice();
    for q in 0..nq as u32 {
        let n = rest.iter().take_while(|c| c.q == q).count();
        let (mine, tail) = rest.split_at(n);
        rest = tail;
        f(q, mine, per_q.saturating_sub(n as u64));
    }
}

/// The cluster-robust SE from per-cluster sums of deviations from the mean, over `n` cells in
/// `c` clusters: √(C/(C−1) · Σ dev²) / N; `None` below two clusters.
fn robust_se(sum_sq_dev: f64, c: usize, n: f64) -> Option<f64> {
    (c >= 2 && n > 0.0).then(|| ((c as f64 / (c - 1) as f64) * sum_sq_dev).sqrt() / n)
}

/// The SEs and variance components of grid `g` over `nq` questions under `kind`, with the
/// questions' clusters `clusters` (for `Cluster::None`, ignored: each cell is its own);
/// `keep_cells` keeps the cells' Overall values for a bootstrap of cells.
pub fn of_grid(
    g: &Grid<'_>,
    nq: usize,
    clusters: &Clusters,
    kind: Cluster,
    p: MissingPolicy,
    keep_cells: bool,
) -> GridUncertainty {
    let zero = p == MissingPolicy::Zero;
    // First pass: the cells in force, per cluster (sum, count), and the overall sums.
    let mut total = [0.0f64; 4];
    let mut n = 0u64;
    let mut per_cluster = vec![([0.0f64; 4], 0u64); clusters.count];
    let mut overall_cells = Vec::new();
    each_question(g, nq, |q, cells, missing| {
        let missing = if zero { missing } else { 0 };
        let slot = &mut per_cluster[clusters.of[q as usize] as usize];
        for c in cells {
            let v = values(c);
            for k in 0..4 {
                total[k] += v[k];
                slot.0[k] += v[k];
            }
            if keep_cells {
                overall_cells.push(v[0]);
            }
        }
        if keep_cells {
            overall_cells.extend(std::iter::repeat_n(0.0, missing as usize));
        }
        slot.1 += cells.len() as u64 + missing;
        n += cells.len() as u64 + missing;
    });
    let nf = n as f64;
    let mean = total.map(|t| if n > 0 { t / nf } else { 0.0 });
    let (sum_sq, c) = match kind {
        Cluster::None => {
            let mut ss = [0.0f64; 4];
            each_question(g, nq, |_, cells, missing| {
                let missing = if zero { missing } else { 0 };
                for c in cells {
                    let v = values(c);
                    for k in 0..4 {
                        ss[k] += (v[k] - mean[k]) * (v[k] - mean[k]);
                    }
                }
                for k in 0..4 {
                    ss[k] += missing as f64 * mean[k] * mean[k];
                }
            });
            (ss, n as usize)
        }
        Cluster::Repo | Cluster::Question => {
            let mut ss = [0.0f64; 4];
            let mut c = 0;
            for (sums, count) in &per_cluster {
                if *count == 0 {
                    continue;
                }
                c += 1;
                for k in 0..4 {
                    let dev = sums[k] - *count as f64 * mean[k];
                    ss[k] += dev * dev;
                }
            }
            (ss, c)
        }
    };
    GridUncertainty {
        se: sum_sq.map(|s| robust_se(s, c, nf)),
        clusters: c,
        variance: variance(g, nq, p),
        overall_cells,
    }
}

/// Sample variance (n − 1) of values given as (sum, sum of squares about a shift) — two-pass
/// for accuracy: callers pass the values.
fn sample_var(values: &[f64]) -> Option<f64> {
    super::stats::sample_std(values).map(|s| s * s)
}

/// The variance components of docs/metrics.md#variance-components, of Overall in points².
fn variance(g: &Grid<'_>, nq: usize, p: MissingPolicy) -> Variance {
    let zero = p == MissingPolicy::Zero;
    let runs: Vec<u32> = g.runs.iter().copied().collect();
    let attempts: Vec<u32> = g.attempts.iter().copied().collect();
    let mut q_means = Vec::new();
    let (mut att_sum, mut att_n) = (0.0, 0u64);
    let (mut run_sum, mut run_n) = (0.0, 0u64);
    let mut att_means = Vec::with_capacity(attempts.len());
    let mut run_values = Vec::with_capacity(runs.len());
    each_question(g, nq, |_, cells, missing| {
        // The question's mean, as Overall takes it (missing cells 0 under zero).
        let denominator = cells.len() as u64 + if zero { missing } else { 0 };
        if denominator > 0 {
            let s: f64 = cells.iter().map(|c| values(c)[0]).sum();
            q_means.push(s / denominator as f64);
        }
        att_means.clear();
        for &a in &attempts {
            let mine: Vec<&Cell> = cells.iter().filter(|c| c.attempt == a).collect();
            run_values.clear();
            if zero {
                for &r in &runs {
                    run_values.push(
                        mine.iter()
                            .find(|c| c.run == r)
                            .map_or(0.0, |c| values(c)[0]),
                    );
                }
            } else {
                run_values.extend(mine.iter().map(|c| values(c)[0]));
            }
            if let Some(m) = super::stats::mean(&run_values) {
                att_means.push(m);
            }
            if let Some(v) = sample_var(&run_values) {
                run_sum += v;
                run_n += 1;
            }
        }
        if let Some(v) = sample_var(&att_means) {
            att_sum += v;
            att_n += 1;
        }
    });
    Variance {
        questions: sample_var(&q_means),
        attempts: (att_n > 0).then(|| att_sum / att_n as f64),
        judge_runs: (run_n > 0).then(|| run_sum / run_n as f64),
    }
}

/// The interval mean ± 1.959964 · se.
pub fn clt_interval(mean: Option<f64>, se: Option<f64>) -> Option<[f64; 2]> {
    let (m, s) = (mean?, se?);
    Some([m - Z95 * s, m + Z95 * s])
}

/// The percentile bootstrap of the mean of `cells`, each cell its own cluster: B resamples of
/// N cells drawn from the seed (`Cluster::None` under `ci = bootstrap`).
pub fn cells_interval(cells: &[f64], b: u32, seed: u64) -> Option<[f64; 2]> {
    use rand::{Rng, SeedableRng};
    if cells.is_empty() || b == 0 || cells.len() > u32::MAX as usize {
        return None;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let n = cells.len() as u32;
    let mut means: Vec<f64> = (0..b)
        .map(|_| {
            let s: f64 = (0..n).map(|_| cells[rng.random_range(0..n) as usize]).sum();
            s / f64::from(n)
        })
        .collect();
    super::bootstrap::interval(&mut means)
}

/// What a paired comparison computes from the per-question differences, beyond the bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairedFigures {
    /// Questions where both models have a mean.
    pub questions: usize,
    pub mean_diff: Option<f64>,
    pub se: Option<f64>,
    pub clusters: usize,
    pub correlation: Option<f64>,
}

impl PairedFigures {
    /// The 95 % interval mean ± 1.959964 · se.
    pub fn clt(&self) -> Option<[f64; 2]> {
        clt_interval(self.mean_diff, self.se)
    }

    /// Two-sided p-value of no difference, by the normal approximation.
    pub fn p_value(&self) -> Option<f64> {
        let (d, se) = (self.mean_diff?, self.se?);
        if se == 0.0 {
            return Some(if d == 0.0 { 1.0 } else { 0.0 });
        }
        Some(libm::erfc((d / se).abs() / std::f64::consts::SQRT_2).min(1.0))
    }

    /// The smallest true difference this comparison detects 4 times in 5 at the 5 % level.
    pub fn mde80(&self) -> Option<f64> {
        self.se.map(|s| (Z95 + Z80) * s)
    }
}

/// The paired figures of two models' per-question means (`None` where a model has no mean on
/// a question), questions grouped by `clusters`.
pub fn paired(a: &[Option<f64>], b: &[Option<f64>], clusters: &Clusters) -> PairedFigures {
    let pairs: Vec<(u32, f64, f64)> = a
        .iter()
        .zip(b)
        .enumerate()
        .filter_map(|(q, (x, y))| Some((q as u32, (*x)?, (*y)?)))
        .collect();
    let n = pairs.len();
    if n == 0 {
        return PairedFigures::default();
    }
    let nf = n as f64;
    let mean = pairs.iter().map(|(_, x, y)| x - y).sum::<f64>() / nf;
    let mut dev = vec![(0.0f64, false); clusters.count];
    for (q, x, y) in &pairs {
        let slot = &mut dev[clusters.of[*q as usize] as usize];
        slot.0 += (x - y) - mean;
        slot.1 = true;
    }
    let c = dev.iter().filter(|d| d.1).count();
    let ss: f64 = dev.iter().map(|d| d.0 * d.0).sum();
    PairedFigures {
        questions: n,
        mean_diff: Some(mean),
        se: robust_se(ss, c, nf),
        clusters: c,
        correlation: pearson(&pairs),
    }
}

/// Pearson's correlation of the pairs' two sides; `None` below two pairs or with a side that
/// does not vary.
fn pearson(pairs: &[(u32, f64, f64)]) -> Option<f64> {
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let mx = pairs.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let my = pairs.iter().map(|p| p.2).sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (_, x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// The rank ranges of models whose per-question means are `means` (all under one judge):
/// X is surely ahead of M when the clustered paired CLT interval of X − M lies wholly above 0;
/// M's range runs from 1 + the number surely ahead of M to N − the number surely behind M.
pub fn rank_ranges(means: &[Vec<Option<f64>>], clusters: &Clusters) -> Vec<[usize; 2]> {
    let n = means.len();
    let mut ahead = vec![0usize; n];
    let mut behind = vec![0usize; n];
    for i in 0..n {
        for j in i + 1..n {
            if let Some([lo, hi]) = paired(&means[i], &means[j], clusters).clt() {
                if lo > 0.0 {
                    // i surely ahead of j.
                    ahead[j] += 1;
                    behind[i] += 1;
                } else if hi < 0.0 {
                    ahead[i] += 1;
                    behind[j] += 1;
                }
            }
        }
    }
    (0..n).map(|m| [1 + ahead[m], n - behind[m]]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::cluster::Clusters;
    use std::collections::BTreeSet;

    /// The definition, written out for one list of cells: x̄, then per cluster the sum of
    /// deviations, then √(C/(C−1)·Σ)/N.
    fn definition(cells: &[(u32, f64)]) -> Option<f64> {
        let n = cells.len() as f64;
        let mean = cells.iter().map(|c| c.1).sum::<f64>() / n;
        let ids: BTreeSet<u32> = cells.iter().map(|c| c.0).collect();
        let c = ids.len() as f64;
        if ids.len() < 2 {
            return None;
        }
        let ss: f64 = ids
            .iter()
            .map(|id| {
                let d: f64 = cells
                    .iter()
                    .filter(|x| x.0 == *id)
                    .map(|x| x.1 - mean)
                    .sum();
                d * d
            })
            .sum();
        Some((c / (c - 1.0) * ss).sqrt() / n)
    }

    /// A small random grid: `nq` questions in repositories of `per_repo`, cells missing at
    /// random, scores drawn with a repository effect.
    fn random_grid(seed: u64, nq: u32, per_repo: u32) -> (Vec<u32>, Grid<'static>) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let repo_of: Vec<u32> = (0..nq).map(|q| q / per_repo).collect();
        let mut cells = Vec::new();
        for q in 0..nq {
            let effect = (repo_of[q as usize] % 3) as f64;
            for attempt in 0..3 {
                for run in 0..2 {
                    if rng.random_range(0..10) == 0 {
                        continue;
                    }
                    let kn = (rng.random_range(0..10u32) as f64 + effect).min(9.0);
                    let cl = f64::from(rng.random_range(0..2u32));
                    cells.push(Cell {
                        q,
                        attempt,
                        run,
                        s: kn + cl,
                        kn,
                        cl,
                        perfect: kn + cl == 10.0,
                    });
                }
            }
        }
        let g = Grid {
            model: "m",
            judge: "j",
            attempts: (0..3).collect(),
            runs: (0..2).collect(),
            cells,
        };
        (repo_of, g)
    }

    /// The cells in force of a grid, enumerated over attempts × runs: (question, attempt, run,
    /// the four values) — missing cells 0 under zero, absent under exclude.
    fn cells_in_force(g: &Grid, nq: u32, p: MissingPolicy) -> Vec<(u32, u32, u32, Values)> {
        let mut out = Vec::new();
        for q in 0..nq {
            for &a in &g.attempts {
                for &r in &g.runs {
                    match g
                        .cells
                        .iter()
                        .find(|c| (c.q, c.attempt, c.run) == (q, a, r))
                    {
                        Some(c) => out.push((q, a, r, values(c))),
                        None if p == MissingPolicy::Zero => out.push((q, a, r, [0.0; 4])),
                        None => {}
                    }
                }
            }
        }
        out
    }

    fn clusters_of(repo_of: &[u32], kind: Cluster) -> Clusters {
        match kind {
            Cluster::Repo => Clusters {
                of: repo_of.to_vec(),
                count: repo_of.iter().max().map_or(0, |m| *m as usize + 1),
            },
            _ => Clusters {
                of: (0..repo_of.len() as u32).collect(),
                count: repo_of.len(),
            },
        }
    }

    fn close(a: Option<f64>, b: Option<f64>) -> bool {
        match (a, b) {
            (Some(x), Some(y)) => (x - y).abs() < 1e-9,
            (None, None) => true,
            _ => false,
        }
    }

    #[test]
    fn every_se_is_the_definition_over_the_cells_in_force() {
        for seed in 0..20 {
            let nq = 5 + seed as u32 % 17;
            let (repo_of, g) = random_grid(seed, nq, 1 + seed as u32 % 4);
            for p in [MissingPolicy::Zero, MissingPolicy::Exclude] {
                let cells = cells_in_force(&g, nq, p);
                for kind in [Cluster::Repo, Cluster::Question, Cluster::None] {
                    let cl = clusters_of(&repo_of, kind);
                    let u = of_grid(&g, nq as usize, &cl, kind, p, false);
                    for k in 0..4 {
                        let tagged: Vec<(u32, f64)> = cells
                            .iter()
                            .enumerate()
                            .map(|(i, (q, _, _, v))| {
                                let id = match kind {
                                    Cluster::Repo => repo_of[*q as usize],
                                    Cluster::Question => *q,
                                    Cluster::None => i as u32,
                                };
                                (id, v[k])
                            })
                            .collect();
                        let want = definition(&tagged);
                        assert!(
                            close(u.se[k], want),
                            "seed {seed} {p:?} {kind:?} metric {k}: {:?} vs {want:?}",
                            u.se[k]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn singleton_clusters_give_the_plain_se() {
        let (repo_of, g) = random_grid(7, 12, 3);
        let u = of_grid(
            &g,
            12,
            &clusters_of(&repo_of, Cluster::None),
            Cluster::None,
            MissingPolicy::Zero,
            false,
        );
        let xs: Vec<f64> = cells_in_force(&g, 12, MissingPolicy::Zero)
            .iter()
            .map(|c| c.3[0])
            .collect();
        let plain = crate::metrics::stats::sample_std(&xs).unwrap() / (xs.len() as f64).sqrt();
        assert!((u.se[0].unwrap() - plain).abs() < 1e-12);
    }

    #[test]
    fn one_repository_per_question_is_clustering_by_question() {
        let (_, g) = random_grid(3, 15, 1);
        let by_repo = clusters_of(&(0..15).collect::<Vec<_>>(), Cluster::Repo);
        let by_q = clusters_of(&[0; 15], Cluster::Question);
        for p in [MissingPolicy::Zero, MissingPolicy::Exclude] {
            let a = of_grid(&g, 15, &by_repo, Cluster::Repo, p, false);
            let b = of_grid(&g, 15, &by_q, Cluster::Question, p, false);
            assert_eq!(a.se, b.se);
        }
    }

    #[test]
    fn shifting_every_score_leaves_the_se() {
        let cells: Vec<(u32, f64)> = (0..40u32)
            .map(|i| (i / 7, f64::from(i * 37 % 11)))
            .collect();
        let shifted: Vec<(u32, f64)> = cells.iter().map(|&(c, x)| (c, x + 42.5)).collect();
        assert!(close(definition(&cells), definition(&shifted)));
        // The paired SE is the SE of differences: shifting one side moves only the mean.
        let a: Vec<Option<f64>> = cells.iter().map(|c| Some(c.1)).collect();
        let b: Vec<Option<f64>> = cells.iter().map(|c| Some(c.1 * 0.5 + 3.0)).collect();
        let b2: Vec<Option<f64>> = b.iter().map(|x| x.map(|v| v - 10.0)).collect();
        let cl = Clusters {
            of: cells.iter().map(|c| c.0).collect(),
            count: 6,
        };
        let (f, g) = (paired(&a, &b, &cl), paired(&a, &b2, &cl));
        assert!(close(f.se, g.se));
        assert!(close(f.mean_diff.map(|d| d + 10.0), g.mean_diff));
    }

    #[test]
    fn fewer_than_two_clusters_leave_the_se_undefined() {
        let (_, g) = random_grid(1, 6, 6);
        let one = Clusters {
            of: vec![0; 6],
            count: 1,
        };
        let u = of_grid(&g, 6, &one, Cluster::Repo, MissingPolicy::Zero, false);
        assert_eq!(u.se, [None; 4]);
        assert_eq!(u.clusters, 1);
        assert_eq!(clt_interval(Some(50.0), u.se[0]), None);
    }

    #[test]
    fn paired_figures_by_hand() {
        // Differences 2, 4 in cluster 0 and 6, 8 in cluster 1: mean 5, deviations −4 and +4,
        // SE = √(2/1 · 32)/4 = 2; p = erfc(2.5/√2); mde80 = 2.801585 · 2.
        let a = [Some(12.0), Some(14.0), Some(16.0), Some(18.0), None];
        let b = [Some(10.0), Some(10.0), Some(10.0), Some(10.0), Some(1.0)];
        let cl = Clusters {
            of: vec![0, 0, 1, 1, 1],
            count: 2,
        };
        let f = paired(&a, &b, &cl);
        assert_eq!(f.questions, 4);
        assert_eq!(f.mean_diff, Some(5.0));
        assert!(close(f.se, Some(2.0)));
        assert!(close(f.p_value(), Some(0.012419330651552265)));
        assert!(close(f.mde80(), Some(2.0 * 2.801585)));
        assert!(close(f.clt().map(|c| c[0]), Some(5.0 - 2.0 * Z95)));
        // B is constant: no correlation.
        assert_eq!(f.correlation, None);
        let b = [Some(11.0), Some(12.0), Some(13.0), Some(14.0), None];
        assert!(close(paired(&a, &b, &cl).correlation, Some(1.0)));
    }

    #[test]
    fn rank_ranges_group_what_no_pair_separates() {
        // Five clusters of two questions; A far ahead, B and C within noise, D far behind.
        let cl = Clusters {
            of: vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
            count: 5,
        };
        let noise = [1.0, -1.0, 2.0, 0.0, -2.0, 1.0, 0.0, -1.0, 1.5, -0.5];
        let model = |level: f64, k: f64| -> Vec<Option<f64>> {
            noise.iter().map(|n| Some(level + k * n)).collect()
        };
        let means = vec![
            model(90.0, 1.0),
            model(50.0, 1.0),
            model(50.5, -1.0),
            model(10.0, 1.0),
        ];
        assert_eq!(
            rank_ranges(&means, &cl),
            vec![[1, 1], [2, 3], [2, 3], [4, 4]]
        );
        // One model alone is first for sure; no model, no ranks.
        assert_eq!(rank_ranges(&means[..1], &cl), vec![[1, 1]]);
        assert!(rank_ranges(&[], &cl).is_empty());
    }

    #[test]
    fn variance_components_by_hand() {
        // Two questions, two attempts, two runs, nothing missing; values s×10:
        // q0: a0 = (10, 30), a1 = (50, 70); q1: a0 = (0, 0), a1 = (20, 20).
        let cell = |q, attempt, run, s: f64| Cell {
            q,
            attempt,
            run,
            s,
            kn: s,
            cl: 0.0,
            perfect: false,
        };
        let g = Grid {
            model: "m",
            judge: "j",
            attempts: (0..2).collect(),
            runs: (0..2).collect(),
            cells: vec![
                cell(0, 0, 0, 1.0),
                cell(0, 0, 1, 3.0),
                cell(0, 1, 0, 5.0),
                cell(0, 1, 1, 7.0),
                cell(1, 0, 0, 0.0),
                cell(1, 0, 1, 0.0),
                cell(1, 1, 0, 2.0),
                cell(1, 1, 1, 2.0),
            ],
        };
        let v = variance(&g, 2, MissingPolicy::Zero);
        // Question means 40 and 10: variance 450. Attempt means q0 (20, 60) → 800, q1 (0, 20)
        // → 200: mean 500. Run variances 200, 200, 0, 0: mean 100.
        assert!(close(v.questions, Some(450.0)));
        assert!(close(v.attempts, Some(500.0)));
        assert!(close(v.judge_runs, Some(100.0)));
        // Projected to what was measured, the SE is the SE.
        assert!(close(v.projected_se(3.0, 2, 2, 2, 2), Some(3.0)));
        // More attempts and runs can only narrow it.
        assert!(v.projected_se(3.0, 2, 2, 8, 4).unwrap() < 3.0);
        // Under exclude a missing run leaves its attempt one value: no run variance there.
        let mut g2 = g.clone();
        g2.cells.remove(0);
        let v2 = variance(&g2, 2, MissingPolicy::Exclude);
        assert!(close(v2.judge_runs, Some(200.0 / 3.0)));
    }
}
