//! How the worker's answers change the app state: one function per answer, no browser in it
//! (natively tested). An answer may call for another request (the tables asked under options
//! no longer in force): those are returned, for the caller to send.

use crate::protocol::{ReportError, Response, Started, ViewOptions};
use crate::state::{AppState, Busy, InputFile, Shared};
use leptos::prelude::*;
use repoprobe_core::ScoreReport;
use std::collections::BTreeMap;
use std::sync::Arc;

fn shared(r: Result<ScoreReport, ReportError>) -> Result<Shared<ScoreReport>, ReportError> {
    r.map(|r| Shared(Arc::new(r)))
}

/// Applies the worker's answer `r` to `state`; the requests it calls for.
pub fn apply(state: AppState, r: Response) -> Vec<crate::protocol::Request> {
    match r {
        Response::Loaded {
            options,
            snapshot,
            report,
            intervals_pending,
        } => {
            // The views' own answers are asked again as the snapshot changes (`crate::query`);
            // the questions' data, shared, is forgotten here.
            crate::state::forget_asked();
            state.questions.set(BTreeMap::new());
            state.snapshot.set(Shared(Arc::new(*snapshot)));
            state.busy.update(|b| {
                if b.is_loading() {
                    *b = Busy::Idle;
                }
            });
            return report_for(state, options, report, intervals_pending, true);
        }
        Response::Report {
            options,
            report,
            intervals_pending,
        } => {
            report_for(state, options, report, intervals_pending, false);
        }
        Response::Started(s) => started(state, s),
        Response::Hashes(h) => state.hashes.update(|m| m.extend(h)),
        Response::Reply { id, body } => {
            crate::query::deliver(id, body);
        }
        Response::Rejected(why) => {
            leptos::logging::error!("the worker could not read what the page sent: {why}");
        }
    }
    Vec::new()
}

/// Shows a report if it is for the options in force. Else, after a load (`loaded`: the worker
/// loaded under the options of its start query, or of a request since overtaken), the tables
/// are asked again under those in force: loaded again if the files that count differ.
fn report_for(
    state: AppState,
    options: ViewOptions,
    report: Result<ScoreReport, ReportError>,
    intervals_pending: bool,
    loaded: bool,
) -> Vec<crate::protocol::Request> {
    use crate::protocol::Request;
    let now = state.options.get_untracked();
    if options == now {
        state.intervals_pending.set(intervals_pending);
        state.report.set(shared(report));
        Vec::new()
    } else if !loaded {
        Vec::new()
    } else if options.keep_bundled != now.keep_bundled {
        vec![Request::Reload { options: now }]
    } else {
        vec![Request::Score { options: now }]
    }
}

/// The files the start script fetched, and what it could not fetch.
fn started(state: AppState, s: Started) {
    let none = s.files.is_empty();
    state.bundled_set.set(s.set);
    state.fetch_failures.update(|f| f.extend(s.failed));
    state.files.update(|f| {
        f.extend(s.files.into_iter().map(|f| InputFile {
            name: f.name,
            origin: f.origin,
            size: f.size,
        }))
    });
    if !s.failures.is_empty() {
        state.busy.set(Busy::Failed(format!(
            "Could not fetch: {}",
            s.failures.join("; ")
        )));
    } else if none {
        state.busy.set(Busy::Idle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::score_options;
    use crate::protocol::{Origin, QuestionData, Request, Snapshot, StartFile};
    use crate::state::empty_report;

    fn state(options: ViewOptions) -> AppState {
        AppState {
            files: RwSignal::new(Vec::new()),
            bundled_set: RwSignal::new(None),
            hashes: RwSignal::new(BTreeMap::new()),
            busy: RwSignal::new(Busy::LOADING_DATA),
            fetch_failures: RwSignal::new(Vec::new()),
            snapshot: RwSignal::new(Shared(Arc::new(Snapshot::default()))),
            options: Memo::new(move |_| options.clone()),
            report: RwSignal::new(empty_report(&ViewOptions::default())),
            intervals_pending: RwSignal::new(false),
            questions: RwSignal::new(BTreeMap::new()),
        }
    }

    fn loaded(options: ViewOptions, pending: bool) -> Response {
        Response::Loaded {
            report: score_options(&options)
                .map(|o| ScoreReport::empty(&o))
                .map_err(ReportError::from),
            options,
            snapshot: Box::default(),
            intervals_pending: pending,
        }
    }

    #[test]
    fn a_load_under_the_options_in_force_is_shown() {
        let owner = Owner::new();
        owner.with(|| {
            let s = state(ViewOptions::default());
            s.questions.update(|q| {
                q.insert("q1".into(), Shared(Arc::new(QuestionData::default())));
            });
            assert!(apply(s, loaded(ViewOptions::default(), true)).is_empty());
            assert!(s.busy.get_untracked().is_idle(), "loading is over");
            assert!(s.intervals_pending.get_untracked());
            assert!(
                s.questions.with_untracked(|q| q.is_empty()),
                "a new load forgets"
            );
        });
    }

    #[test]
    fn a_load_under_other_options_asks_again() {
        let owner = Owner::new();
        owner.with(|| {
            let now = ViewOptions {
                drop: vec!["q1".into()],
                ..ViewOptions::default()
            };
            let s = state(now.clone());
            assert_eq!(
                apply(s, loaded(ViewOptions::default(), false)),
                [Request::Score {
                    options: now.clone()
                }]
            );
            let kept = ViewOptions {
                keep_bundled: true,
                ..ViewOptions::default()
            };
            assert_eq!(
                apply(s, loaded(kept, false)),
                [Request::Reload { options: now }]
            );
            // A report for options no longer in force is not shown, nor asked again.
            let before = s.report.get_untracked();
            let other = Response::Report {
                options: ViewOptions::default(),
                report: Err(ReportError::Score(
                    repoprobe_core::metrics::ScoreError::UnknownQuestion("x".into()),
                )),
                intervals_pending: false,
            };
            assert!(apply(s, other).is_empty());
            assert!(s.report.get_untracked() == before);
        });
    }

    #[test]
    fn what_the_start_script_could_not_fetch_is_said() {
        let owner = Owner::new();
        owner.with(|| {
            let s = state(ViewOptions::default());
            let started = Started {
                files: vec![StartFile {
                    name: "a".into(),
                    origin: Origin::Url,
                    size: 1,
                    ranged: None,
                    note: None,
                }],
                failures: vec!["public-data/index.json: HTTP 404".into()],
                ..Started::default()
            };
            apply(s, Response::Started(started));
            assert_eq!(s.files.with_untracked(|f| f.len()), 1);
            assert_eq!(
                s.busy.get_untracked(),
                Busy::Failed("Could not fetch: public-data/index.json: HTTP 404".into())
            );
            // Nothing fetched and nothing failed: nothing to wait for.
            let s = state(ViewOptions::default());
            apply(s, Response::Started(Started::default()));
            assert!(s.busy.get_untracked().is_idle());
        });
    }
}
