//! The Runs view's rows, held in the worker: every run under the options in force (the core's
//! `metrics::runs`, as `repoprobe list-runs` computes them), the last filter's selection, and the
//! window of it the page shows. A scroll asks for another window of the same selection, which
//! is a slice; a new filter or order selects again over the rows held.

use crate::options::score_options;
use crate::protocol::{ReportError, RunsPage, RunsQuery, TrajectoryKey, ViewOptions};
use repoprobe_core::Dataset;
use repoprobe_core::metrics::runs::{self, Order, RunFilter, Runs};
use repoprobe_core::sort::CollectTree;
use std::collections::{BTreeSet, HashSet};

/// The most rows one page carries: a window larger than any screen, small to send.
pub const MAX_WINDOW: usize = 500;

/// The last selection: its filter, order and search, and the rows it kept.
type Selection = (
    RunFilter,
    Option<Order>,
    Option<(String, bool, usize)>,
    Vec<usize>,
);

/// What is held between requests.
#[derive(Default)]
pub struct Cache {
    rows: Option<(ViewOptions, Result<Runs, ReportError>)>,
    selection: Option<Selection>,
    /// The runs a trajectories file holds, read once with the rows.
    held: HashSet<TrajectoryKey>,
}

impl Cache {
    /// A new load: nothing held is of it.
    pub fn clear(&mut self) {
        *self = Cache::default();
    }

    /// The window `q` asks for under `options`; `held`: the runs whose trajectory is held.
    /// `hits`: the runs the search under way (its text and whether a regular expression) has
    /// found, for a query that keeps only those.
    pub fn page(
        &mut self,
        ds: &Dataset,
        options: &ViewOptions,
        q: &RunsQuery,
        held: impl FnOnce() -> HashSet<TrajectoryKey>,
        hits: Option<(&str, bool, &HashSet<TrajectoryKey>)>,
    ) -> Result<RunsPage, ReportError> {
        if self.rows.as_ref().is_some_and(|(o, _)| o != options) {
            self.rows = None;
        }
        if self.rows.is_none() {
            self.selection = None;
            self.held = held();
        }
        let (_, rows) = self.rows.get_or_insert_with(|| {
            let rows = score_options(options)
                .map_err(ReportError::from)
                .and_then(|o| Ok(runs::runs(ds, &o)?));
            (options.clone(), rows)
        });
        let all = rows.as_ref().map_err(ReportError::clone)?;
        let fresh = self
            .selection
            .as_ref()
            .is_none_or(|(f, o, s, _)| f != &q.filter || *o != q.order || *s != q.search);
        if fresh {
            let mut kept = runs::select(&all.rows, &q.filter, q.order);
            if let Some((text, regex, _)) = &q.search {
                // The runs the search found, if it is this search; none if it is another.
                let found = hits
                    .filter(|(t, r, _)| t == text && r == regex)
                    .map(|h| h.2);
                kept.retain(|&i| {
                    let r = &all.rows[i];
                    found.is_some_and(|f| {
                        f.contains(&TrajectoryKey {
                            question_id: r.question_id.clone(),
                            model: r.model.clone(),
                            attempt: r.attempt,
                        })
                    })
                });
            }
            self.selection = Some((q.filter.clone(), q.order, q.search.clone(), kept));
        }
        let kept = self
            .selection
            .as_ref()
            .map_or(&[][..], |(_, _, _, k)| k.as_slice());
        Ok(window(all, kept, q, &self.held))
    }
}

fn window(all: &Runs, kept: &[usize], q: &RunsQuery, held: &HashSet<TrajectoryKey>) -> RunsPage {
    let from = q.from.min(kept.len());
    let to = from.saturating_add(q.count.min(MAX_WINDOW)).min(kept.len());
    let rows: Vec<_> = kept[from..to]
        .iter()
        .map(|&i| all.rows[i].clone())
        .collect();
    let trajectory = rows
        .iter()
        .map(|r| {
            held.contains(&TrajectoryKey {
                question_id: r.question_id.clone(),
                model: r.model.clone(),
                attempt: r.attempt,
            })
        })
        .collect();
    let set = |f: fn(&runs::RunRow) -> &str| -> Vec<String> {
        let s: BTreeSet<&str> = all.rows.iter().map(f).collect_set();
        s.into_iter().map(str::to_string).collect()
    };
    RunsPage {
        total: all.rows.len(),
        kept: kept.len(),
        from,
        rows,
        trajectory,
        judge: all.judge.clone(),
        classifier: all.classifier.clone(),
        models: set(|r| &r.model),
        categories: set(|r| &r.category),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::testdata::golden;

    #[test]
    fn a_window_is_a_slice_of_the_selection_and_a_new_filter_selects_again() {
        let l = golden();
        let mut c = Cache::default();
        let o = ViewOptions::default();
        let all = c
            .page(
                &l.dataset,
                &o,
                &RunsQuery {
                    count: 100,
                    ..Default::default()
                },
                HashSet::new,
                None,
            )
            .unwrap();
        assert_eq!(all.kept, all.total);
        assert_eq!(all.rows.len(), all.total);
        assert!(all.models.len() >= 2, "{:?}", all.models);
        let q = RunsQuery {
            filter: RunFilter {
                model: Some(all.models[0].clone()),
                ..Default::default()
            },
            order: Some(Order::parse("question:desc").unwrap()),
            search: None,
            from: 1,
            count: 1,
        };
        let page = c.page(&l.dataset, &o, &q, HashSet::new, None).unwrap();
        let cli = runs::runs(&l.dataset, &Default::default()).unwrap();
        let want = runs::select(&cli.rows, &q.filter, q.order);
        assert_eq!(page.kept, want.len());
        assert_eq!(page.rows, [cli.rows[want[1]].clone()]);
        assert_eq!(page.trajectory, [false]);
        // Only the runs a search found, if it is the search asked about; none for another.
        let first = &cli.rows[want[0]];
        let found: HashSet<TrajectoryKey> = [TrajectoryKey {
            question_id: first.question_id.clone(),
            model: first.model.clone(),
            attempt: first.attempt,
        }]
        .into();
        let s = RunsQuery {
            search: Some(("x".into(), false, 1)),
            from: 0,
            ..q.clone()
        };
        let hits = c.page(&l.dataset, &o, &s, HashSet::new, Some(("x", false, &found)));
        assert_eq!(hits.unwrap().rows, std::slice::from_ref(first));
        let other = c.page(
            &l.dataset,
            &o,
            &RunsQuery {
                search: Some(("y".into(), false, 1)),
                ..s.clone()
            },
            HashSet::new,
            Some(("x", false, &found)),
        );
        assert_eq!(other.unwrap().kept, 0);
        // A window past the end is empty, never a panic.
        let past = RunsQuery { from: 10_000, ..q };
        assert!(
            c.page(&l.dataset, &o, &past, HashSet::new, None)
                .unwrap()
                .rows
                .is_empty()
        );
        // Options the core refuses say why.
        let bad = ViewOptions {
            judge: Some("nobody".into()),
            ..ViewOptions::default()
        };
        assert!(c.page(&l.dataset, &bad, &past, HashSet::new, None).is_err());
    }
}
