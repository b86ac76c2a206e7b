//! The Runs view's rows, held in the worker: every run under the options in force (the core's
//! `metrics::runs`, as `repoprobe runs` computes them), the last filter's selection, and the
//! window of it the page shows. A scroll asks for another window of the same selection, which
//! is a slice; a new filter or order selects again over the rows held.

use crate::options::score_options;
use crate::protocol::{RunsPage, RunsQuery, TrajectoryKey, ViewOptions};
use repoprobe_core::Dataset;
use repoprobe_core::metrics::runs::{self, Order, RunFilter, Runs};
use std::collections::{BTreeSet, HashSet};

/// The most rows one page carries: a window larger than any screen, small to send.
pub const MAX_WINDOW: usize = 500;

/// What is held between requests.
#[derive(Default)]
pub struct Cache {
    rows: Option<(ViewOptions, Result<Runs, String>)>,
    selection: Option<(RunFilter, Option<Order>, Vec<usize>)>,
}

impl Cache {
    /// A new load: nothing held is of it.
    pub fn clear(&mut self) {
        *self = Cache::default();
    }

    /// The window `q` asks for under `options`; `held`: the runs whose trajectory is held.
    pub fn page(
        &mut self,
        ds: &Dataset,
        options: &ViewOptions,
        q: &RunsQuery,
        held: impl FnOnce() -> HashSet<TrajectoryKey>,
    ) -> Result<RunsPage, String> {
        if self.rows.as_ref().is_none_or(|(o, _)| o != options) {
            let rows =
                score_options(options).and_then(|o| runs::runs(ds, &o).map_err(|e| e.to_string()));
            self.rows = Some((options.clone(), rows));
            self.selection = None;
        }
        let Some((_, Ok(all))) = &self.rows else {
            return Err(match &self.rows {
                Some((_, Err(e))) => e.clone(),
                _ => "no runs".into(),
            });
        };
        let fresh = self
            .selection
            .as_ref()
            .is_none_or(|(f, o, _)| f != &q.filter || *o != q.order);
        if fresh {
            let kept = runs::select(&all.rows, &q.filter, q.order);
            self.selection = Some((q.filter.clone(), q.order, kept));
        }
        let kept = self
            .selection
            .as_ref()
            .map_or(&[][..], |(_, _, k)| k.as_slice());
        Ok(window(all, kept, q, held()))
    }
}

fn window(all: &Runs, kept: &[usize], q: &RunsQuery, held: HashSet<TrajectoryKey>) -> RunsPage {
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
        let s: BTreeSet<&str> = all.rows.iter().map(f).collect();
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
            from: 1,
            count: 1,
        };
        let page = c.page(&l.dataset, &o, &q, HashSet::new).unwrap();
        let cli = runs::runs(&l.dataset, &Default::default()).unwrap();
        let want = runs::select(&cli.rows, &q.filter, q.order);
        assert_eq!(page.kept, want.len());
        assert_eq!(page.rows, [cli.rows[want[1]].clone()]);
        assert_eq!(page.trajectory, [false]);
        // A window past the end is empty, never a panic.
        let past = RunsQuery { from: 10_000, ..q };
        assert!(
            c.page(&l.dataset, &o, &past, HashSet::new)
                .unwrap()
                .rows
                .is_empty()
        );
        // Options the core refuses say why.
        let bad = ViewOptions {
            judge: Some("nobody".into()),
            ..ViewOptions::default()
        };
        assert!(c.page(&l.dataset, &bad, &past, HashSet::new).is_err());
    }
}
