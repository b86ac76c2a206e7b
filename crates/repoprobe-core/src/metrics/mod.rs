//! Every number of the paper's evaluation (docs/metrics.md) and the additions beyond it, computed by one
//! function, [`score`], into one [`ScoreReport`] whose JSON form is docs/metrics.md#the-score-report's. The site and the
//! CLI both call it: one core, one result.

pub mod agreement;
pub mod audit;
pub mod bootstrap;
mod choice;
pub mod cluster;
pub mod difficulty;
pub mod error;
pub mod evidence;
pub mod grid;
pub mod histogram;
pub mod index;
pub mod items;
pub mod judges;
pub mod nominal;
pub mod paired;
pub mod panel;
pub mod retrieval;
pub mod runs;
pub mod score_report;
pub mod stats;
pub mod strata;
pub mod uncertainty;
pub mod weights;

use crate::dataset::Dataset;
use crate::issue::Issue;
use crate::model::FailureMode;
use crate::sort::CollectTree;
use crate::sort::SharedSort;
pub use error::ScoreError;
use grid::{Grid, Tally};
use index::Index;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

use choice::choose_judge;
pub(crate) use choice::in_force;
pub use choice::{classifier_in_force, judge_in_force};
pub use grid::MissingPolicy;
pub use paired::Paired;
pub use retrieval::RetrievalRow;
use score_report::policy;
pub use score_report::{
    FailureModeRow, IssueOut, ModelScore, PolicyInfo, ReliabilityRow, ScoreOptions, ScoreReport,
    Spread, Stratum, StratumCell, StratumRow,
};
pub use weights::{BadRule, WeightRule, WeightRuleError};

/// Computes every metric of docs/metrics.md for a dataset, over the questions in force: those
/// created on or after `opts.created_after` when it is set, without `opts.drop_questions`.
pub fn score(
    ds: &Dataset,
    issues: &[Issue],
    opts: &ScoreOptions,
) -> Result<ScoreReport, ScoreError> {
    if let Some(panel) = &opts.panel {
        return with_panel(ds, issues, opts, panel);
    }
    let Some((kept, window)) = in_force(ds, opts)? else {
        let mut report = score_all(ds, issues, opts, true)?;
        with_extras(&mut report, ds, opts);
        return Ok(report);
    };
    let mut report = score_all(&kept, issues, opts, false)?;
    report.policy.dropped_questions = opts.drop_questions.iter().cloned().collect();
    report.created_after = window;
    with_extras(&mut report, &kept, opts);
    Ok(report)
}

/// The report with a panel of judges as one more judge (the judge in force unless one is
/// named): its judgments added to the dataset's, each member's agreement with it beside.
fn with_panel(
    ds: &Dataset,
    issues: &[Issue],
    opts: &ScoreOptions,
    panel: &panel::Panel,
) -> Result<ScoreReport, ScoreError> {
    let agreement = judges::JudgesOptions {
        a: None,
        b: None,
        bootstrap: opts.bootstrap,
        seed: opts.seed,
        cluster: opts.cluster,
    };
    let (with, mut report) = panel.apply(ds, &agreement)?;
    // The members' agreement over the questions in force, as every other figure.
    if let Some((kept, _)) = in_force(&with, opts)? {
        report.agreement = panel.member_agreement(&kept, &agreement);
    }
    let inner = ScoreOptions {
        judge: opts.judge.clone().or_else(|| Some(report.judge.clone())),
        panel: None,
        ..opts.clone()
    };
    let mut r = score(&with, issues, &inner)?;
    r.panel = Some(report);
    Ok(r)
}

/// What the report carries only when asked for, over `ds`, the questions in force.
fn with_extras(report: &mut ScoreReport, ds: &Dataset, opts: &ScoreOptions) {
    report.evidence = opts.evidence.then(|| evidence::evidence(&ds.answers));
    report.histograms = opts
        .histograms
        .then(|| histogram::histograms(&ds.judgments));
}

fn score_all(
    ds: &Dataset,
    issues: &[Issue],
    opts: &ScoreOptions,
    check_weights: bool,
) -> Result<ScoreReport, ScoreError> {
    let index = Index::new(ds);
    let nq = index.questions.len();
    let weights = weights::Resolved::new(&opts.weights, &index, check_weights)?;
    let p = opts.missing;
    let Built {
        grids,
        answered,
        resamples,
    } = Built::new(ds, &index, &weights, opts);
    let clusters = cluster::Clusters::new(&index.questions, opts.cluster);
    let all: Vec<&Grid> = grids.values().collect();
    let mut models = model_rows(&all, |g| {
        model_score(
            g,
            nq,
            answered.get(g.model),
            &clusters,
            resamples.as_ref(),
            opts,
        )
    });
    rank_models(&mut models, &all, nq, &clusters, p);

    let judge = choose_judge(&grids, opts.judge.as_deref())?;
    let judged: Vec<&Grid> = match &judge {
        Some(j) => grids.values().filter(|g| g.judge == j).collect(),
        None => Vec::new(),
    };

    let strata = opts
        .strata
        .iter()
        .map(|&s| (s.as_str().to_string(), strata::rows(s, &index, &judged, p)))
        .collect_map();
    let reliability = reliability(ds, &index, &judged, judge.as_deref(), p);
    let (classifier, failure_modes, failure_mode_average) = failure_modes(ds);

    let paired = match (&opts.compare, &judge) {
        (Some(pair), Some(j)) => {
            let r = resamples.as_ref();
            Some(paired_comparison(pair, j, &judged, nq, &clusters, p, r)?)
        }
        _ => None,
    };

    let items = opts.items.then(|| items::rows(ds, &index, &judged));
    let leaderboard: Vec<&str> = models.iter().map(|m| m.model.as_str()).collect();
    let retrieval = retrieval::rows(
        ds,
        &index,
        &weights,
        &retrieval::Inputs {
            judge: judge.as_deref(),
            classifier: classifier.as_deref(),
            leaderboard: &leaderboard,
        },
    );
    let audit = audit::audit(&ds.reported);
    let issues = issues_out(issues, &models, p);

    Ok(ScoreReport {
        policy: policy(opts),
        judge,
        models,
        strata,
        reliability,
        classifier,
        failure_modes,
        failure_mode_average,
        paired,
        items,
        retrieval,
        audit,
        issues,
        created_after: None,
        evidence: None,
        histograms: None,
        panel: None,
    })
}

/// What every table is computed from: the (model, judge) grids, the questions each model
/// answered, and the bootstrap's resamples.
struct Built<'d> {
    grids: BTreeMap<(&'d str, &'d str), Grid<'d>>,
    answered: HashMap<&'d str, Vec<bool>>,
    resamples: Option<bootstrap::Resamples>,
}

impl<'d> Built<'d> {
    fn new(
        ds: &'d Dataset,
        index: &Index<'d>,
        weights: &weights::Resolved,
        opts: &ScoreOptions,
    ) -> Built<'d> {
        // Whole clusters are resampled (each question its own under `question` and `none`;
        // `none`'s model intervals resample cells, `uncertainty::cells_interval`), and only
        // when the intervals are the bootstrap's.
        let units = cluster::Clusters::new(&index.questions, opts.cluster).count;
        let b = match opts.ci {
            cluster::CiMethod::Bootstrap => opts.bootstrap,
            cluster::CiMethod::Clt => 0,
        };
        let new_resamples = || bootstrap::Resamples::new(units, b, opts.seed);
        // With threads, the resamples are drawn beside the grids' building (one sequence from
        // the seed, as without threads).
        #[cfg(feature = "parallel")]
        let (grids, answered, resamples) = std::thread::scope(|s| {
            let drawn = s.spawn(new_resamples);
            let grids = grid::grids(ds, index, weights);
            let answered = grid::answered_questions(ds, index);
            let resamples = drawn
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (grids, answered, resamples)
        });
        #[cfg(not(feature = "parallel"))]
        let (grids, answered, resamples) = (
            grid::grids(ds, index, weights),
            grid::answered_questions(ds, index),
            new_resamples(),
        );
        Built {
            grids,
            answered,
            resamples,
        }
    }
}

/// A grid's row of Table 3 over `nq` questions (`answered`: the questions its model answered),
/// its standard errors and interval over `clusters`; the rank is set apart ([`rank_models`]).
fn model_score(
    g: &Grid,
    nq: usize,
    answered: Option<&Vec<bool>>,
    clusters: &cluster::Clusters,
    resamples: Option<&bootstrap::Resamples>,
    opts: &ScoreOptions,
) -> ModelScore {
    let p = opts.missing;
    let t = g.tally(nq);
    let cell_bootstrap =
        opts.ci == cluster::CiMethod::Bootstrap && opts.cluster == cluster::Cluster::None;
    let u = uncertainty::of_grid(g, nq, clusters, opts.cluster, p, cell_bootstrap);
    let overall = t.overall(p);
    let ci95 = match opts.ci {
        cluster::CiMethod::Clt => uncertainty::clt_interval(overall, u.se[0]),
        // An interval needs two clusters, as the SE does: one cluster resampled is itself.
        cluster::CiMethod::Bootstrap if u.se[0].is_none() => None,
        cluster::CiMethod::Bootstrap => match opts.cluster {
            cluster::Cluster::None => {
                uncertainty::cells_interval(&u.overall_cells, opts.bootstrap, opts.seed)
            }
            cluster::Cluster::Repo | cluster::Cluster::Question => {
                resamples.and_then(|r| r.overall_ci(&per_cluster_tallies(g, nq, clusters), p))
            }
        },
    };
    ModelScore {
        benchmark_questions: nq,
        never_answered: g.never_answered(answered, nq),
        model: g.model.to_string(),
        judge: g.judge.to_string(),
        questions: g.questions_judged(),
        judgments: g.cells.len(),
        coverage: t.coverage(),
        overall: t.overall(p),
        knowledge: t.knowledge(p),
        clarity: t.clarity(p),
        perfect: t.perfect_rate(p),
        se: u.se[0],
        ci95,
        knowledge_se: u.se[1],
        clarity_se: u.se[2],
        perfect_se: u.se[3],
        clusters: u.clusters,
        rank: None,
        variance: u.variance,
        attempts: g.attempts.len(),
        runs: g.runs.len(),
    }
}

/// A grid's sums per cluster (index = cluster id), each with its own grid.
fn per_cluster_tallies(g: &Grid, nq: usize, clusters: &cluster::Clusters) -> Vec<Tally> {
    let mut out = vec![Tally::default(); clusters.count];
    for (q, t) in g.per_question_tallies(nq).iter().enumerate() {
        out[clusters.of[q] as usize].merge(t);
    }
    out
}

/// Each row's rank range among the rows of its judge (`rows` in the grids' order, `all`).
fn rank_models(
    rows: &mut [ModelScore],
    all: &[&Grid],
    nq: usize,
    clusters: &cluster::Clusters,
    p: MissingPolicy,
) {
    let judges: BTreeSet<&str> = all.iter().map(|g| g.judge).collect_set();
    for judge in judges {
        let mine: Vec<usize> = (0..all.len()).filter(|&i| all[i].judge == judge).collect();
        let means: Vec<Vec<Option<f64>>> = mine
            .iter()
            .map(|&i| all[i].per_question_means(nq, p))
            .collect();
        let ranks = uncertainty::rank_ranges(&means, clusters);
        for (&i, rank) in mine.iter().zip(ranks) {
            rows[i].rank = Some(rank);
        }
    }
}

/// One row per grid, in the grids' order. Each row depends on its own grid only (and the
/// shared resamples): rows computed on threads, in contiguous runs put back in order, are the
/// rows of one thread.
#[cfg(feature = "parallel")]
fn model_rows(all: &[&Grid], row: impl Fn(&Grid) -> ModelScore + Sync) -> Vec<ModelScore> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = all.len().div_ceil(threads.max(1)).max(1);
    let row = &row;
    std::thread::scope(|s| {
        let mut runs = all.chunks(per);
        let first = runs.next().unwrap_or(&[]);
        let others: Vec<_> = runs
            .map(|run| s.spawn(move || run.iter().map(|g| row(g)).collect::<Vec<_>>()))
            .collect();
        let mut models: Vec<ModelScore> = first.iter().map(|g| row(g)).collect();
        for h in others {
            models.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        models
    })
}

/// One row per grid, in the grids' order (no threads without the `parallel` feature).
#[cfg(not(feature = "parallel"))]
fn model_rows(all: &[&Grid], row: impl Fn(&Grid) -> ModelScore) -> Vec<ModelScore> {
    all.iter().map(|g| row(g)).collect()
}

/// The paired comparison of models `a` and `b` under judge `judge`; an error names a model
/// that judge never judged.
fn paired_comparison(
    (a, b): &(String, String),
    judge: &str,
    judged: &[&Grid],
    nq: usize,
    clusters: &cluster::Clusters,
    p: MissingPolicy,
    resamples: Option<&bootstrap::Resamples>,
) -> Result<Paired, ScoreError> {
    let find = |m: &str| {
        judged
            .iter()
            .find(|g| g.model == m)
            .copied()
            .ok_or_else(|| ScoreError::UnknownModel(m.to_string(), judge.to_string()))
    };
    Ok(paired::paired(
        find(a)?,
        find(b)?,
        nq,
        clusters,
        p,
        resamples,
    ))
}

/// The load's issues, then one per model row whose questions never answered count as 0 under
/// `p`: its score is lower than its judgments say, and the reader must be told.
fn issues_out(issues: &[Issue], models: &[ModelScore], p: MissingPolicy) -> Vec<IssueOut> {
    let mut out: Vec<IssueOut> = issues.iter().map(IssueOut::from).collect();
    out.extend(models.iter().filter_map(|m| {
        m.never_answered_note(p).map(|note| IssueOut {
            file: String::new(),
            location: format!("model {:?}, judge {:?}", m.model, m.judge),
            message: format!(
                "{note}: {} question(s) have no answer record and no judgment of this model \
                 (not a failed run); `--missing exclude` leaves them out",
                m.never_answered
            ),
        })
    }));
    out
}

fn spread(per_run: BTreeMap<u32, f64>) -> Spread {
    let v: Vec<f64> = per_run.values().copied().collect();
    Spread {
        mean: stats::mean(&v),
        std: stats::sample_std(&v),
        range: stats::range(&v),
        per_run,
    }
}

/// Table 5: per model, Overall per judge run and its spread; scalar judgments side by side.
fn reliability(
    ds: &Dataset,
    index: &Index<'_>,
    judged: &[&Grid<'_>],
    judge: Option<&str>,
    p: MissingPolicy,
) -> Vec<ReliabilityRow> {
    let nq = index.questions.len() as u64;
    let scalar_judge = scalar_judge(ds, judge);
    judged
        .iter()
        .map(|g| ReliabilityRow {
            model: g.model.to_string(),
            judge: g.judge.to_string(),
            runs: g.runs.len(),
            checklist: checklist_spread(g, nq, p),
            scalar: scalar_judge.and_then(|sj| scalar_spread(ds, index, g, sj, nq, p)),
        })
        .collect()
}

/// The scalar judge: the judge in force if it gave scalar judgments; else the scalar judge with
/// the most judgments (ties to the name that sorts first).
fn scalar_judge<'d>(ds: &'d Dataset, judge: Option<&'d str>) -> Option<&'d str> {
    let mut scalar_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &ds.scalar_judgments {
        *scalar_counts.entry(s.judge.as_str()).or_default() += 1;
    }
    match judge {
        Some(j) if scalar_counts.contains_key(j) => Some(j),
        _ => {
            let mut best: Option<(&str, usize)> = None;
            for (&j, &n) in &scalar_counts {
                if best.is_none_or(|(_, m)| n > m) {
                    best = Some((j, n));
                }
            }
            best.map(|(j, _)| j)
        }
    }
}

/// The spread over judge runs of a grid's checklist Overall (each run over `nq` questions ×
/// the attempts).
fn checklist_spread(g: &Grid<'_>, nq: u64, p: MissingPolicy) -> Spread {
    let mut per_run: BTreeMap<u32, Tally> = g
        .runs
        .iter()
        .map(|&r| {
            (
                r,
                Tally {
                    grid: nq * g.attempts.len() as u64,
                    ..Tally::default()
                },
            )
        })
        .collect_map();
    for c in &g.cells {
        if let Some(t) = per_run.get_mut(&c.run) {
            t.add(c);
        }
    }
    spread(
        per_run
            .into_iter()
            .filter_map(|(r, t)| t.overall(p).map(|v| (r, v)))
            .collect_map(),
    )
}

/// The spread over judge runs of the scalar judge `sj`'s Overall of the grid's model, `None`
/// when it judged none of the model's answers.
fn scalar_spread(
    ds: &Dataset,
    index: &Index<'_>,
    g: &Grid<'_>,
    sj: &str,
    nq: u64,
    p: MissingPolicy,
) -> Option<Spread> {
    // Per run: sum of rates and count; grid = questions × attempts seen.
    let mut attempts = BTreeSet::new();
    let mut sums: BTreeMap<u32, (f64, u64)> = BTreeMap::new();
    let mut mine: Vec<(&str, u32, u32, f64)> = ds
        .scalar_judgments
        .iter()
        .filter(|s| {
            s.judge == sj && s.model == g.model && index.by_id.contains_key(s.question_id.as_str())
        })
        .map(|s| (s.question_id.as_str(), s.attempt, s.judge_run, s.rate()))
        .collect();
    if mine.is_empty() {
        return None;
    }
    // Sum in a fixed order so the result never depends on input order.
    mine.shared_sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    for (_, attempt, run, rate) in &mine {
        attempts.insert(*attempt);
        let e = sums.entry(*run).or_insert((0.0, 0));
        e.0 += rate;
        e.1 += 1;
    }
    let grid = nq * attempts.len() as u64;
    let per_run = sums
        .into_iter()
        .filter_map(|(r, (sum, n))| {
            let d = match p {
                MissingPolicy::Zero => grid.max(n),
                MissingPolicy::Exclude => n,
            };
            (d > 0).then(|| (r, 100.0 * sum / d as f64))
        })
        .collect_map();
    Some(spread(per_run))
}

type FailureModes = (Option<String>, Vec<FailureModeRow>, BTreeMap<String, f64>);

/// Table 7: shares of each mode per model over the labels of the classifier with most labels.
fn failure_modes(ds: &Dataset) -> FailureModes {
    let Some(classifier) = classifier_in_force(ds) else {
        return (None, Vec::new(), BTreeMap::new());
    };
    let mut counts: BTreeMap<&str, BTreeMap<FailureMode, usize>> = BTreeMap::new();
    for l in ds
        .failure_labels
        .iter()
        .filter(|l| l.classifier == classifier)
    {
        *counts
            .entry(l.model.as_str())
            .or_default()
            .entry(l.mode)
            .or_default() += 1;
    }
    let rows: Vec<FailureModeRow> = counts
        .into_iter()
        .map(|(model, modes)| {
            let total: usize = modes.values().sum();
            let shares = FailureMode::ALL
                .iter()
                .map(|m| {
                    (
                        m.as_str().to_string(),
                        100.0 * *modes.get(m).unwrap_or(&0) as f64 / total as f64,
                    )
                })
                .collect();
            FailureModeRow {
                model: model.to_string(),
                failures: total,
                shares,
            }
        })
        .collect();
    let average = FailureMode::ALL
        .iter()
        .filter_map(|m| {
            let v: Vec<f64> = rows.iter().map(|r| r.shares[m.as_str()]).collect();
            stats::mean(&v).map(|x| (m.as_str().to_string(), x))
        })
        .collect_map();
    (Some(classifier.to_string()), rows, average)
}
