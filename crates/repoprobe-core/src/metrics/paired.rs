//! The paired comparison of two models on the same questions (beyond the paper): the mean
//! difference, its clustered SE, p-value and power from `uncertainty`, and under
//! `ci = bootstrap` its interval from the resamples every model shares (`bootstrap`).

use super::bootstrap::{Resamples, interval};
use super::cluster::Clusters;
use super::grid::{Grid, MissingPolicy};
use super::uncertainty;
use serde::{Deserialize, Serialize};

/// The paired comparison of two models on the same questions (beyond the paper).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    pub a: String,
    pub b: String,
    pub judge: String,
    /// Questions in the comparison (all, or under `exclude` those both models have).
    pub questions: usize,
    /// Mean over questions of (A's mean score − B's), in percentage points.
    pub mean_diff: Option<f64>,
    /// The clustered standard error of `mean_diff` (questions grouped by cluster), points.
    #[serde(default)]
    pub se: Option<f64>,
    /// `mean_diff`'s 95 % interval under `policy.ci`.
    pub ci95: Option<[f64; 2]>,
    /// Two-sided p-value of "no difference" (normal approximation: mean_diff / se).
    #[serde(default)]
    pub p_value: Option<f64>,
    /// Pearson's correlation of A's and B's per-question means: the higher, the more the
    /// pairing removes of the questions' own difficulty.
    #[serde(default)]
    pub correlation: Option<f64>,
    /// The smallest true difference detected 4 times in 5 at the 5 % level:
    /// (1.959964 + 0.841621) · se, in points.
    #[serde(default)]
    pub mde80: Option<f64>,
    /// Clusters the compared questions fall in.
    #[serde(default)]
    pub clusters: usize,
    /// Share of bootstrap resamples in which A's mean is above B's, in percent (only under
    /// `ci = bootstrap`).
    pub a_better_pct: Option<f64>,
}

/// Mean over the questions of `qs` of the per-question difference A − B in percentage points;
/// questions where either side has no defined mean are skipped (only possible under `exclude`).
fn mean_diff<'a>(
    qs: impl Iterator<Item = &'a u32>,
    a: &[Option<f64>],
    b: &[Option<f64>],
) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0u64);
    for &q in qs {
        if let (Some(x), Some(y)) = (a[q as usize], b[q as usize]) {
            sum += x - y;
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// Paired comparison of two models of the same judge over the same questions, questions
/// grouped by `clusters`: the clustered SE and its interval, or with `resamples` (drawn over
/// the clusters) the bootstrap's.
pub fn paired(
    a: &Grid<'_>,
    b: &Grid<'_>,
    nq: usize,
    clusters: &Clusters,
    p: MissingPolicy,
    resamples: Option<&Resamples>,
) -> Paired {
    let ma = a.per_question_means(nq, p);
    let mb = b.per_question_means(nq, p);
    let f = uncertainty::paired(&ma, &mb, clusters);
    let (ci95, a_better_pct) = match resamples {
        // The bootstrap needs two clusters, as the SE does.
        Some(r) if f.se.is_some() => {
            let members = clusters.members();
            let mut values: Vec<f64> = r
                .each()
                .filter_map(|s| {
                    let qs = s.iter().flat_map(|&c| members[c as usize].iter());
                    mean_diff(qs, &ma, &mb)
                })
                .collect();
            let better = values.iter().filter(|&&d| d > 0.0).count();
            let pct = (!values.is_empty()).then(|| 100.0 * better as f64 / values.len() as f64);
            (interval(&mut values), pct)
        }
        Some(_) => (None, None),
        None => (f.clt(), None),
    };
    Paired {
        a: a.model.to_string(),
        b: b.model.to_string(),
        judge: a.judge.to_string(),
        questions: f.questions,
        mean_diff: f.mean_diff,
        se: f.se,
        ci95,
        p_value: f.p_value(),
        correlation: f.correlation,
        mde80: f.mde80(),
        clusters: f.clusters,
        a_better_pct,
    }
}
