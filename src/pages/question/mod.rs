//! One question: the question, repository at its pinned commit, reference answer, every
//! checklist item with its rubric, the item × model matrix of scores (each cell opens the judge's
//! rationales), each model's answer, and two answers side by side. `j`/`k` (or the arrow keys)
//! go to the next/previous question. What to show is derived apart ([`shown`]); the parts lay
//! it out.

mod answers;
pub(crate) mod checklist;
mod header;
mod matrix;
mod reweight;
pub mod shown;
mod trajectory;

use crate::components::markdown::FileLinks;
use crate::state::AppState;
use crate::{href, view_href};
use leptos::ev::keydown;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use leptos_router::params::ParamsMap;
use repoprobe_core::sort::CollectTree;
use repoprobe_core::sort::SharedSort;
use shown::{Address, derive, neighbours, step};

#[component]
pub fn QuestionDetail() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    // Previous and next question ids, in id order.
    let neighbours = Memo::new(move |_| {
        let id = query.get().get("id").unwrap_or_default();
        let l = state.snapshot.get();
        let ids: Vec<&str> = l.questions.iter().map(|q| q.id.as_str()).collect();
        neighbours(&ids, &id)
    });
    keys(state, query, neighbours);
    // The view is built again when the question's answers and judgments arrive from the worker
    // (read back from the files, which can take seconds on a gigabyte): a re-weight panel the
    // reader opened meanwhile stays open.
    let reweight_open = RwSignal::new(false);
    // And so does the trajectory section's state (open, the search typed).
    let kept = trajectory::Kept::new();

    view! {
        {move || {
            let q = query.get();
            let id = q.get("id").unwrap_or_default();
            let Some(question) = state.snapshot.get().question(&id).cloned() else {
                return view! {
                    <h1>"Question not found"</h1>
                    <p>{format!("No question with id {id:?} is loaded.")}</p>
                    <a href=view_href(crate::View::Questions, &[])>"All questions"</a>
                }
                    .into_any();
            };
            let judge = state.report.get().ok().and_then(|r| r.judge.clone()).unwrap_or_default();
            // Judgments and answers come from the worker, asked for on the first visit.
            crate::requests::request_question(state, &id);
            let data = state.questions.get().get(&id).cloned();
            let rules = state.options.get().weights;
            let at = Address { model: q.get("model"), item: q.get("item"), att: q.get("att") };
            let s = derive(question, data.as_deref(), judge, at, &rules);
            // Paths in answers and rationales link to the file at the pinned commit (known forges).
            let links = FileLinks::new(&s.question.repo.url, &s.question.repo.commit);
            view! {
                {header::head(&s, neighbours.get(), &links)}
                {header::reader_controls(&s)}
                {reweight::panel(&s, &rules, reweight_open)}
                {checklist::reading(&s, &links)}
                {compare_link(s.trajectory.as_ref(), data.as_deref().map_or(&[][..], |d| d.trajectories.as_slice()))}
                {s.trajectory.clone().map(|key| {
                    let evidence = s.question.checklist.iter().flat_map(|c| c.evidence.iter().map(|e| e.path.clone())).collect_set();
                    trajectory::section(key, links.clone(), evidence, kept)
                })}
                {matrix::matrix(&s)}
                {matrix::rationale(s.rationale.clone(), &links)}
                <h2>"Answers side by side"</h2>
                <answers::SideBySide answers=s.answers.clone() links=links.clone() />
                {answers::every_answer(s.answers, &links)}
            }
                .into_any()
        }}
    }
}

/// The view's keys: `j`/`k` (or the arrows) the next/previous question, `n`/`p` the next or
/// previous checklist item and `m`/`M` model, whose rationales the view then shows.
fn keys(
    state: AppState,
    query: Memo<ParamsMap>,
    neighbours: Memo<(Option<String>, Option<String>)>,
) {
    let navigate = use_navigate();
    // Checklist item ids and judged models of this question: the cursor of n/p and m/M.
    let cursors = Memo::new(move |_| {
        let id = query.get().get("id").unwrap_or_default();
        let items: Vec<String> = state
            .snapshot
            .get()
            .question(&id)
            .map(|q| q.checklist.iter().map(|c| c.id.clone()).collect())
            .unwrap_or_default();
        let data = state.questions.get().get(&id).cloned();
        let mut models: Vec<String> = data
            .iter()
            .flat_map(|d| d.judgments.iter())
            .filter(|j| j.question_id == id)
            .map(|j| j.model.clone())
            .collect();
        models.shared_sort();
        models.dedup();
        (items, models)
    });
    let handle = window_event_listener(keydown, move |ev: web_sys::KeyboardEvent| {
        if crate::components::help::not_a_shortcut(&ev) {
            return;
        }
        let key = ev.key();
        let q = query.get_untracked();
        let target = match key.as_str() {
            "n" | "p" | "m" | "M" => {
                let (items, models) = cursors.get_untracked();
                let (item, model) = if matches!(key.as_str(), "n" | "p") {
                    let model = q.get("model").or_else(|| models.first().cloned());
                    (step(&items, q.get("item"), key == "n"), model)
                } else {
                    let item = q.get("item").or_else(|| items.first().cloned());
                    (item, step(&models, q.get("model"), key == "m"))
                };
                href(&[("item", item.as_deref()), ("model", model.as_deref())])
            }
            "j" | "ArrowRight" | "k" | "ArrowLeft" => {
                let (prev, next) = neighbours.get_untracked();
                let Some(id) = (if matches!(key.as_str(), "j" | "ArrowRight") {
                    next
                } else {
                    prev
                }) else {
                    return;
                };
                href(&[
                    ("id", Some(&id)),
                    ("model", None),
                    ("item", None),
                    ("step", None),
                    ("kind", None),
                ])
            }
            _ => return,
        };
        navigate(&target, Default::default());
    });
    on_cleanup(move || handle.remove());
}

/// A link to this run and another of the question side by side (the first other run a
/// trajectories file holds), when there is one.
fn compare_link(
    key: Option<&crate::protocol::TrajectoryKey>,
    runs: &[(String, u32)],
) -> Option<impl IntoView + use<>> {
    let key = key?;
    let other = runs
        .iter()
        .find(|(m, a)| (m, *a) != (&key.model, key.attempt))?;
    let href = view_href(
        crate::View::Compare,
        &[
            ("id", &key.question_id),
            ("a", &format!("{}:{}", key.model, key.attempt)),
            ("b", &format!("{}:{}", other.0, other.1)),
        ],
    );
    Some(view! {
        <p class="compare-link">
            <a href=href>{format!("This run side by side with {} (attempt {})", other.0, other.1)}</a>
            " — or pick any two in the "
            <a href=view_href(crate::View::Runs, &[("question", &key.question_id)])>"Runs view"</a>
        </p>
    })
}
