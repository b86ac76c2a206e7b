//! What the page asks of the worker, and when: files to add, a question's data (once per load),
//! the per-item rows a view needs, a paired comparison, and the report again when the options
//! of the URL change. Sent through `crate::transport`.

use crate::protocol::{Request, ViewOptions};
use crate::state::{AppState, InputFile, Shared};
use crate::transport::post;
use leptos::prelude::*;
use repoprobe_core::metrics::items::ItemRow;

/// Adds files: their handles go to the worker (nothing is read on this thread), which adds them
/// to the files it holds and loads and scores them all again, reading them as streams.
pub fn add_files(state: AppState, files: Vec<InputFile>, blobs: Vec<web_sys::Blob>) {
    if files.is_empty() {
        return;
    }
    state.busy.set(Some("Validating and scoring…".into()));
    let names = files.iter().map(|f| f.name.clone()).collect();
    let origins = files.iter().map(|f| f.origin).collect();
    state.files.update(|f| f.extend(files));
    let list = js_sys::Array::new();
    for b in blobs {
        list.push(&b);
    }
    post(
        &Request::Add {
            names,
            origins,
            options: state.options.get_untracked(),
        },
        Some(list),
    );
}

/// Asks the worker for one question's judgments and answers (once per question and load).
pub fn request_question(state: AppState, id: &str) {
    if crate::state::first_ask(id) && !state.questions.with_untracked(|q| q.contains_key(id)) {
        post(&Request::Question { id: id.to_string() }, None);
    }
}

/// The per-item rows for the options in force, asked of the worker when a view needs them
/// (again after every load or change of options); `None` until they arrive. Without any model's
/// attainment per item (see [`use_model_items`]).
pub fn use_items(state: AppState) -> Memo<Option<Shared<Vec<ItemRow>>>> {
    use_model_items(state, Signal::derive(|| None))
}

/// The per-item rows with `model`'s attainment per item (`ItemRow::per_model` holds that model
/// alone: the rows of every model would be large).
pub fn use_model_items(
    state: AppState,
    model: Signal<Option<String>>,
) -> Memo<Option<Shared<Vec<ItemRow>>>> {
    Effect::new(move |_| {
        state.snapshot.track();
        let options = state.options.get();
        let model = model.get();
        let have = state.items.with_untracked(|i| {
            i.as_ref()
                .is_some_and(|(o, m, _)| *o == options && *m == model)
        });
        if !have {
            post(&Request::Items { options, model }, None);
        }
    });
    Memo::new(move |_| {
        let options = state.options.get();
        let model = model.get();
        state
            .items
            .get()
            .filter(|(o, m, _)| *o == options && *m == model)
            .map(|(_, _, i)| i)
    })
}

/// Asks the worker for a paired comparison under the options in force.
pub fn request_paired(options: ViewOptions, a: String, b: String) {
    post(&Request::Paired { options, a, b }, None);
}

/// Asks the worker for the agreement between judges A and B (every judge where `None`) in the
/// files that count under `options`.
pub fn request_judges(options: ViewOptions, a: Option<String>, b: Option<String>) {
    post(&Request::Judges { options, a, b }, None);
}

/// Asks the worker for the answers to grade: `sample` of those `judge` judged (the default judge
/// where `None`).
pub fn request_grade(
    options: ViewOptions,
    judge: Option<String>,
    sample: repoprobe_core::grading::Sample,
) {
    post(
        &Request::Grade {
            options,
            judge,
            sample,
        },
        None,
    );
}

/// Asks the worker for the grades in `judge`'s (`human:NAME`) judgments in the files.
pub fn request_grades_of(options: ViewOptions, judge: String) {
    post(&Request::GradesOf { options, judge }, None);
}

/// New options: only the report changes, unless the files that count change (the bundled set
/// kept or not): then the worker loads again.
pub fn follow_options(state: AppState) {
    let options = state.options;
    // New options: only the report changes, unless the files that count change (the bundled
    // set kept or not): then the worker loads again.
    Effect::new(move |prev: Option<ViewOptions>| {
        let o = options.get();
        if let Some(prev) = prev
            && !state.files.with_untracked(|f| f.is_empty())
        {
            if prev.keep_bundled != o.keep_bundled {
                post(&Request::Reload { options: o.clone() }, None);
            } else {
                post(&Request::Score { options: o.clone() }, None);
            }
        }
        o
    });
}

/// Asks for a page of run `key`'s trajectory: `count` steps of `kinds` (all when empty) from
/// step `from` on, with its outline when the page has none yet (`head`).
pub fn request_trajectory(
    key: crate::protocol::TrajectoryKey,
    from: u64,
    kinds: Vec<crate::protocol::StepKind>,
    count: usize,
    head: bool,
) {
    post(
        &Request::Trajectory {
            key,
            from,
            kinds,
            count,
            head,
        },
        None,
    );
}

/// Asks which steps of run `key`'s trajectory hold `query`.
pub fn search_trajectory(key: crate::protocol::TrajectoryKey, query: String) {
    post(&Request::TrajectorySearch { key, query }, None);
}

/// Asks for a window of the runs under `options` (the Runs view).
pub fn request_runs(options: ViewOptions, query: crate::protocol::RunsQuery) {
    post(&Request::Runs { options, query }, None);
}

/// Asks for two runs of question `id` side by side.
pub fn request_compare(id: String, a: (String, u32), b: (String, u32)) {
    post(&Request::Compare { id, a, b }, None);
}
