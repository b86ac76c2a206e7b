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
    /// The cells in force, by Overall's value (`Cluster::None`'s bootstrap resamples them).
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
/// questions' clusters `clusters` (for `Cluster::None`, ignored: each cell is its own).
pub fn of_grid(
    g: &Grid<'_>,
    nq: usize,
    clusters: &Clusters,
    kind: Cluster,
    p: MissingPolicy,
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
            overall_cells.push(v[0]);
        }
        overall_cells.extend(std::iter::repeat_n(0.0, missing as usize));
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
/// M's range is [1 + #surely ahead of M, N − #surely behind M].
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
