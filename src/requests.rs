//! What the page asks of the worker for more than one view, and when: files to add, a
//! question's data (once per load), the per-item rows a view needs, and the report again when
//! the options of the URL change. Sent through `crate::transport` (asks through
//! `crate::query`).

use crate::protocol::{Ask, Reply, Request, ViewOptions};
use crate::query::use_answer;
use crate::state::{AppState, Busy, InputFile, Shared};
use crate::transport::post;
use leptos::prelude::*;
use repoprobe_core::metrics::items::ItemRow;
use std::sync::Arc;

/// Adds files: their handles go to the worker (nothing is read on this thread), which adds them
/// to the files it holds and loads and scores them all again, reading them as streams.
pub fn add_files(state: AppState, files: Vec<InputFile>, blobs: Vec<web_sys::Blob>) {
    if files.is_empty() {
        return;
    }
    state.busy.set(Busy::SCORING);
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

/// Asks the worker for one question's judgments and answers (once per question and load): the
/// views that show a question share its data (`AppState::questions`).
pub fn request_question(state: AppState, id: &str) {
    if crate::state::first_ask(id) && !state.questions.with_untracked(|q| q.contains_key(id)) {
        let ask = Ask::Question { id: id.to_string() };
        crate::query::send(ask, move |id, body| {
            // One question's data answers once: nothing more is awaited.
            crate::query::forget(id);
            if let Reply::Question(q) = body {
                state.questions.update(|m| {
                    m.insert(q.id.clone(), Shared(Arc::new(q)));
                });
            }
        });
    }
}

/// The per-item rows for the options in force, asked of the worker when a view needs them
/// (again after every load or change of options); `None` until they arrive. Without any model's
/// attainment per item (see [`use_model_items`]).
pub fn use_items(state: AppState) -> Signal<Option<Shared<Vec<ItemRow>>>> {
    use_model_items(state, Signal::derive(|| None))
}

/// The per-item rows with `model`'s attainment per item (`ItemRow::per_model` holds that model
/// alone: the rows of every model would be large).
pub fn use_model_items(
    state: AppState,
    model: Signal<Option<String>>,
) -> Signal<Option<Shared<Vec<ItemRow>>>> {
    let answer = use_answer(
        move || Some((state.options.get(), model.get())),
        |(options, model)| Ask::Items {
            options: options.clone(),
            model: model.clone(),
        },
        |body, _| match body {
            Reply::Items(items) => Some(Shared(Arc::new(items))),
            _ => None,
        },
    );
    Signal::derive(move || answer.current())
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
