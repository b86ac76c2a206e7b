//! The reports the worker answers with, for the options of a view: without the per-item rows
//! (large; asked for apart), the bootstrap's intervals (under `ci = bootstrap`) in a second
//! answer on large data.

use crate::options::score_options;
use crate::protocol::{ReportError, ViewOptions};
use repoprobe_core::metrics::cluster::CiMethod;
use repoprobe_core::metrics::items::ItemRow;
use repoprobe_core::{Loaded, ScoreOptions, ScoreReport, score};

/// Whether the worker answers a report in two steps, the tables first (scored without the
/// bootstrap) and their 95 % intervals in a second answer: only under `ci = bootstrap`, when
/// the bootstrap of `quick` (a report scored with `bootstrap: 0`) under `options` would be
/// long. Its cost grows with the rows × the questions × the resamples (1,000 by default); from
/// a million on, ~10 ms in the worker's wasm, the tables are not held back for it. Under
/// `ci = clt` the intervals are the mean ± 1.96 SE, computed with the tables: never deferred.
/// The numbers are the same either way: the bootstrap only adds the intervals
/// (`intervals_are_all_the_bootstrap_adds`).
pub fn defer_intervals(quick: &ScoreReport, options: &ScoreOptions) -> bool {
    /// Rows × questions × resamples from which the intervals come in a second answer.
    const DEFER_AT: u64 = 1_000_000;
    if options.ci != CiMethod::Bootstrap {
        return false;
    }
    let questions = quick
        .models
        .iter()
        .map(|m| m.benchmark_questions)
        .max()
        .unwrap_or(0);
    (quick.models.len() as u64)
        .saturating_mul(questions as u64)
        .saturating_mul(u64::from(options.bootstrap))
        >= DEFER_AT
}

/// The report for the page under `options`, without the per-item rows: those are large and only
/// some views want them ([`items`]); with `bootstrap: Some(0)`, without the intervals too.
pub fn report(
    l: &Loaded,
    options: &ViewOptions,
    bootstrap: Option<u32>,
) -> Result<ScoreReport, ReportError> {
    let mut o = score_options(options)?;
    o.items = false;
    o.bootstrap = bootstrap.unwrap_or(o.bootstrap);
    Ok(score(&l.dataset, &l.issues, &o)?)
}

/// The report the page gets first, and whether its intervals follow in a second answer
/// ([`defer_intervals`]: on large data the tables are not held back for the bootstrap; every
/// other number is the same).
pub fn first_report(l: &Loaded, options: &ViewOptions) -> (Result<ScoreReport, ReportError>, bool) {
    let Ok(full) = score_options(options) else {
        return (report(l, options, None), false);
    };
    let quick = report(l, options, Some(0));
    match &quick {
        Ok(q) if full.bootstrap > 0 && defer_intervals(q, &full) => (quick, true),
        _ => (report(l, options, None), false),
    }
}

/// The per-item rows under `options`, each with the attainment of `model` alone (every model's
/// would be rows × models); none when the options cannot be honoured (the report says why).
pub fn items(l: &Loaded, options: &ViewOptions, model: Option<&String>) -> Vec<ItemRow> {
    let mut items = score_options(options)
        .ok()
        .and_then(|o| {
            // The items do not depend on the bootstrap: skip it.
            let o = ScoreOptions { bootstrap: 0, ..o };
            score(&l.dataset, &l.issues, &o).ok()
        })
        .and_then(|r| r.items)
        .unwrap_or_default();
    for i in &mut items {
        i.per_model.retain(|m, _| Some(m) == model);
    }
    items
}

/// The paired comparison of models `a` and `b` under `options`.
pub fn paired(
    l: &Loaded,
    options: &ViewOptions,
    a: &str,
    b: &str,
) -> Result<ScoreReport, ReportError> {
    let mut o = score_options(options)?;
    o.items = false;
    o.compare = Some((a.to_string(), b.to_string()));
    Ok(score(&l.dataset, &l.issues, &o)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::testdata::golden;
    use repoprobe_core::MissingPolicy;
    use repoprobe_core::metrics::cluster::Cluster;

    /// The view's options under the bootstrap's intervals.
    fn bootstrap(o: ViewOptions) -> ViewOptions {
        ViewOptions {
            ci: CiMethod::Bootstrap,
            ..o
        }
    }

    #[test]
    fn intervals_are_all_the_bootstrap_adds() {
        // Under `ci = bootstrap` the tables the worker answers first (no bootstrap) are those
        // of the full report but for the intervals and the policy's count of resamples.
        let l = golden();
        for options in [
            ViewOptions::default(),
            ViewOptions {
                missing: MissingPolicy::Exclude,
                ..ViewOptions::default()
            },
        ] {
            let full_options = score_options(&bootstrap(options)).unwrap();
            let full = score(&l.dataset, &l.issues, &full_options).unwrap();
            assert!(full.models.iter().any(|m| m.ci95.is_some()));
            let quick = score(
                &l.dataset,
                &l.issues,
                &ScoreOptions {
                    bootstrap: 0,
                    ..full_options
                },
            )
            .unwrap();
            let mut bare = full.clone();
            bare.policy.bootstrap = 0;
            for m in &mut bare.models {
                m.ci95 = None;
            }
            assert_eq!(quick, bare);
        }
    }

    #[test]
    fn clt_intervals_come_with_the_tables() {
        // Under the default `ci = clt` the intervals do not need the bootstrap: a report
        // scored without it already has them, and the first answer is the whole report.
        let l = golden();
        for cluster in [Cluster::Repo, Cluster::Question, Cluster::None] {
            let o = ViewOptions {
                cluster,
                ..ViewOptions::default()
            };
            let full = report(&l, &o, None).unwrap();
            let quick = report(&l, &o, Some(0)).unwrap();
            assert!(full.models.iter().any(|m| m.ci95.is_some()), "{cluster:?}");
            assert_eq!(
                full.models.iter().map(|m| m.ci95).collect::<Vec<_>>(),
                quick.models.iter().map(|m| m.ci95).collect::<Vec<_>>()
            );
            let (first, deferred) = first_report(&l, &o);
            assert!(!deferred);
            assert_eq!(first.unwrap(), full);
        }
    }

    #[test]
    fn only_a_long_bootstrap_is_deferred() {
        let l = golden();
        let o = score_options(&bootstrap(ViewOptions::default())).unwrap();
        let quick = score(
            &l.dataset,
            &l.issues,
            &ScoreOptions {
                bootstrap: 0,
                ..o.clone()
            },
        )
        .unwrap();
        assert!(!quick.models.is_empty());
        assert!(!defer_intervals(&quick, &o), "a few questions: one answer");
        assert!(!defer_intervals(
            &quick,
            &ScoreOptions {
                bootstrap: 0,
                ..o.clone()
            }
        ));
        let mut large = quick.clone();
        let row = large.models[0].clone();
        large.models = vec![row; 20];
        for m in &mut large.models {
            m.benchmark_questions = 500;
        }
        assert!(
            defer_intervals(&large, &o),
            "20 rows × 500 questions × 1,000 resamples"
        );
        assert!(
            !defer_intervals(
                &large,
                &ScoreOptions {
                    ci: CiMethod::Clt,
                    ..o.clone()
                }
            ),
            "the CLT's intervals are never deferred, however large the data"
        );
        assert!(
            !defer_intervals(&ScoreReport::empty(&o), &o),
            "nothing to score"
        );
    }

    #[test]
    fn items_carry_one_models_attainment_and_paired_compares_two() {
        let l = golden();
        let o = ViewOptions::default();
        let rows = items(&l, &o, Some(&"A".to_string()));
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r.per_model.keys().all(|m| m == "A")));
        assert!(items(&l, &o, None).iter().all(|r| r.per_model.is_empty()));
        let p = paired(&l, &o, "A", "B").unwrap();
        assert!(p.paired.is_some());
        assert!(report(&l, &o, Some(0)).unwrap().items.is_none());
    }
}
