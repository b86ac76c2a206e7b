//! The Runs view (`?view=runs`, docs/site.md#the-runs-view): one row per run (question × model
//! × attempt) with its verdict, score, evidence read and missed, tool calls, edit attempts,
//! tokens, cost and duration, filtered and ordered by the address (`&model=…&verdict=…
//! &noevidence=1&edit=1&min=…&max=…&sort=cost:desc`). The worker holds every row and applies
//! the core's filter (the one `repoprobe runs` applies); the page holds the rows in view only.

use crate::href;
use crate::protocol::{RunsPage, RunsQuery};
use crate::state::AppState;
use crate::ui::window::{self, BLOCK, WINDOW};
use crate::view_href;
use leptos::html;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use leptos_router::params::ParamsMap;
use repoprobe_core::metrics::runs::{Column, Order, RunRow, Verdict};
use repoprobe_core::report::{Cell, RUN_HEADERS, run_cells};
use repoprobe_core::{FailureMode, RecordKind};

/// The column each header sorts by (none for the lists of paths and of tool kinds).
const SORT: [Option<Column>; 16] = [
    Some(Column::Question),
    Some(Column::Model),
    Some(Column::Attempt),
    Some(Column::Category),
    Some(Column::Verdict),
    Some(Column::Score),
    Some(Column::EvidenceRecall),
    None,
    None,
    Some(Column::FilesRead),
    Some(Column::Turns),
    Some(Column::ToolCalls),
    Some(Column::EditAttempts),
    Some(Column::Tokens),
    Some(Column::Cost),
    Some(Column::Duration),
];

#[component]
pub fn Runs() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let start = RwSignal::new(0usize);
    let asked = Memo::new(move |_| {
        let (filter, order) = query.with(|q| crate::options::runs_filter(|k| q.get(k)));
        RunsQuery {
            filter,
            order,
            from: start.get(),
            count: WINDOW,
        }
    });
    // Ask for the window in view whenever it, the options or the data change.
    Effect::new(move |_| {
        state.snapshot.track();
        let options = state.options.get();
        let q = asked.get();
        let have = state
            .runs
            .with_untracked(|r| r.as_ref().is_some_and(|(o, a, _)| *o == options && *a == q));
        if !have {
            crate::requests::request_runs(options, q);
        }
    });
    // The answer shown: the latest for these options, filter and order (a window of another
    // scroll position stays until the new one comes: nothing blinks).
    let shown = Memo::new(move |_| {
        let options = state.options.get();
        let q = asked.get();
        state
            .runs
            .get()
            .filter(|(o, a, _)| *o == options && a.filter == q.filter && a.order == q.order)
    });
    view! {
        <h1>"Runs"</h1>
        <p class="lede">
            "Every run — a model's attempt at a question — with its verdict, what it read of the \
             question's evidence and what it did. Filter and sort by any column; a row opens its \
             question, with the run's trajectory when one is loaded."
        </p>
        {move || shown.get().and_then(|(_, _, p)| p.ok()).map(|p| controls(query, &p))}
        {move || match shown.get() {
            None => view! { <p aria-busy="true">"Reading the runs…"</p> }.into_any(),
            Some((_, _, Err(e))) => view! { <p class="error">{e}</p> }.into_any(),
            Some((_, _, Ok(p))) if p.total == 0 => view! {
                <crate::problems::WhyEmpty
                    state=state
                    needs=RecordKind::Answer
                    fallback="No answers are loaded: the runs are the answer records."
                />
            }
                .into_any(),
            Some((_, _, Ok(p))) => table(query, &p, start).into_any(),
        }}
    }
}

/// The filter's controls, each a part of the address.
fn controls(query: Memo<ParamsMap>, p: &RunsPage) -> impl IntoView + use<> {
    let verdicts: Vec<(String, String)> = Verdict::ALL
        .iter()
        .map(|v| (v.as_str().to_string(), v.label().to_string()))
        .collect();
    let modes: Vec<(String, String)> = FailureMode::ALL
        .iter()
        .map(|m| (m.as_str().to_string(), m.label().to_string()))
        .collect();
    let same = |v: &[String]| v.iter().map(|x| (x.clone(), x.clone())).collect::<Vec<_>>();
    view! {
        <div class="controls" role="group" aria-label="Filter the runs">
            {select(query, "model", "Model", same(&p.models))}
            {select(query, "category", "Category", same(&p.categories))}
            {select(query, "verdict", "Verdict", verdicts)}
            {select(query, "mode", "Failure mode", modes)}
            {check(query, "noevidence", "read none of the evidence")}
            {check(query, "edit", "attempted an edit")}
            {number(query, "min", "Score from")}
            {number(query, "max", "to")}
            {text(query, "question", "Question")}
        </div>
    }
}

fn go(key: &'static str, v: String) {
    let navigate = use_navigate();
    navigate(
        &href(&[(key, (!v.is_empty()).then_some(v.as_str()))]),
        Default::default(),
    );
}

fn select(
    query: Memo<ParamsMap>,
    key: &'static str,
    label: &'static str,
    values: Vec<(String, String)>,
) -> impl IntoView {
    view! {
        <label>
            {label} " "
            <select
                on:change=move |ev| go(key, event_target_value(&ev))
                prop:value=move || query.get().get(key).unwrap_or_default()
            >
                <option value="">"all"</option>
                {values.into_iter().map(|(v, l)| view! { <option value=v>{l}</option> }).collect_view()}
            </select>
        </label>
    }
}

fn check(query: Memo<ParamsMap>, key: &'static str, label: &'static str) -> impl IntoView {
    view! {
        <label>
            <input
                type="checkbox"
                name=key
                prop:checked=move || query.get().get(key).as_deref() == Some("1")
                on:change=move |ev| go(key, if event_target_checked(&ev) { "1".into() } else { String::new() })
            />
            " " {label}
        </label>
    }
}

fn number(query: Memo<ParamsMap>, key: &'static str, label: &'static str) -> impl IntoView {
    view! {
        <label>
            {label} " "
            <input
                type="number"
                name=key
                min="0"
                max="100"
                step="any"
                prop:value=move || query.get().get(key).unwrap_or_default()
                on:change=move |ev| go(key, event_target_value(&ev))
            />
            " %"
        </label>
    }
}

fn text(query: Memo<ParamsMap>, key: &'static str, label: &'static str) -> impl IntoView {
    view! {
        <label>
            {label} " "
            <input
                type="search"
                name=key
                placeholder="id"
                prop:value=move || query.get().get(key).unwrap_or_default()
                on:change=move |ev| go(key, event_target_value(&ev).trim().to_string())
            />
        </label>
    }
}

/// The table: a window of rows between spacers inside its own scroll box.
fn table(query: Memo<ParamsMap>, p: &RunsPage, start: RwSignal<usize>) -> impl IntoView + use<> {
    let scroller = NodeRef::<html::Div>::new();
    let kept = p.kept;
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            let from = window::window_start(f64::from(el.scroll_top()), kept);
            if from != start.get_untracked() {
                start.set(from);
            }
        }
    };
    let (above, below) = window::spacers(p.from, p.rows.len(), kept);
    let order = query.with_untracked(|q| crate::options::runs_filter(|k| q.get(k)).1);
    let count = if p.kept == p.total {
        format!("{} runs", p.total)
    } else {
        format!("{} of {} runs", p.kept, p.total)
    };
    let judge = p
        .judge
        .as_deref()
        .map_or(String::new(), |j| format!(" · verdicts of judge {j}"));
    let rows: Vec<AnyView> = p
        .rows
        .iter()
        .zip(&p.trajectory)
        .map(|(r, &t)| row(r, t).into_any())
        .collect();
    view! {
        <p id="runs-count" data-kept=p.kept data-total=p.total data-from=p.from>
            {count} {judge}
            {(p.kept > BLOCK).then_some(" · scroll: rows come as they are reached")}
        </p>
        <div class="runs-scroll" node_ref=scroller on:scroll=on_scroll tabindex="0" aria-label="Runs table">
            <table class="runs-table" aria-rowcount=p.kept + 1>
                <thead>
                    <tr>
                        {RUN_HEADERS.iter().zip(SORT).map(|(h, c)| header(h, c, order)).collect_view()}
                        <th scope="col">"Trajectory"</th>
                    </tr>
                </thead>
                <tbody>
                    <tr class="spacer" aria-hidden="true" style:height=format!("{above}px")></tr>
                    {rows}
                    <tr class="spacer" aria-hidden="true" style:height=format!("{below}px")></tr>
                </tbody>
            </table>
        </div>
    }
}

fn header(h: &'static str, column: Option<Column>, order: Option<Order>) -> impl IntoView {
    let Some(column) = column else {
        return view! { <th scope="col">{h}</th> }.into_any();
    };
    let now = order.filter(|o| o.column == column);
    let aria = now.map(|o| {
        if o.descending {
            "descending"
        } else {
            "ascending"
        }
    });
    // A click sorts by the column; a second reverses it.
    let next = Order {
        column,
        descending: now.is_some_and(|o| !o.descending),
    }
    .as_string();
    view! {
        <th scope="col" aria-sort=aria>
            <a href=href(&[("sort", Some(&next))])>{h}{now.map(|o| if o.descending { " ▼" } else { " ▲" })}</a>
        </th>
    }
    .into_any()
}

fn row(r: &RunRow, trajectory: bool) -> impl IntoView + use<> {
    let open = view_href(
        "question",
        &[
            ("id", &r.question_id),
            ("model", &r.model),
            ("att", &r.attempt.to_string()),
        ],
    );
    let cells: Vec<Cell> = run_cells(r);
    let numeric = [2usize, 5, 6, 9, 10, 12, 13, 14, 15];
    view! {
        <tr class=format!("verdict-{}", r.verdict.as_str()) data-question=r.question_id.clone() data-model=r.model.clone() data-attempt=r.attempt>
            {cells
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    let value = c.value.map(|v| v.to_string());
                    let title = c.text.clone();
                    if i == 0 {
                        view! { <th scope="row"><a href=open.clone()>{c.text}</a></th> }.into_any()
                    } else {
                        view! { <td class:num=numeric.contains(&i) data-value=value title=title>{c.text}</td> }.into_any()
                    }
                })
                .collect_view()}
            <td>{trajectory.then(|| view! { <a href=open.clone() class="open-run">"open"</a> })}</td>
        </tr>
    }
}
