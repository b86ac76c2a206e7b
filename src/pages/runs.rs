//! The Runs view (`?view=runs`, docs/site.md#the-runs-view): one row per run (question × model
//! × attempt) with its verdict, score, evidence read and missed, tool calls, edit attempts,
//! tokens, cost and duration, filtered and ordered by the address (`&model=…&verdict=…
//! &noevidence=1&edit=1&min=…&max=…&sort=cost:desc`). The worker holds every row and applies
//! the core's filter (the one `repoprobe list-runs` applies); the page holds the rows in view only.

use crate::href;
use crate::protocol::{Ask, Reply, Request, RunsPage, RunsQuery, SearchHit, SearchState};
use crate::query::{Answer, use_answer};
use crate::state::{AppState, Shared};
use crate::ui::window::{self, BLOCK, WINDOW};
use crate::view_href;
use leptos::html;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use leptos_router::params::ParamsMap;
use repoprobe_core::metrics::runs::{Column, Order, RunRow, Verdict};
use repoprobe_core::report::{Cell, RUN_HEADERS, run_cells};
use repoprobe_core::{FailureMode, Keyed, RecordKind};
use std::sync::Arc;

/// The column each header sorts by (none for the lists of paths and of tool kinds).
const SORT: [Option<Column>; 17] = [
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
    None,
    Some(Column::Tokens),
    Some(Column::Cost),
    Some(Column::Duration),
];

#[component]
pub fn Runs() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let start = RwSignal::new(0usize);
    // Two runs picked for side by side (the last two ticked).
    let picked = RwSignal::new(Vec::<Picked>::new());
    let searched = Memo::new(move |_| {
        query.with(|q| {
            let text = q.get("q").filter(|t| !t.trim().is_empty())?;
            Some((text, q.get("re").as_deref() == Some("1")))
        })
    });
    let search = follow_search(state, searched);
    let asked = Memo::new(move |_| {
        let (filter, order) = query.with(|q| crate::options::runs_filter(|k| q.get(k)));
        let search = searched.get().map(|(text, regex)| {
            let hit = search
                .current()
                .filter(|s| s.query == text && s.regex == regex)
                .map_or(0, |s| s.runs_hit);
            (text, regex, hit)
        });
        RunsQuery {
            filter,
            search,
            order,
            from: start.get(),
            count: WINDOW,
        }
    });
    // Ask for the window in view whenever it, the options or the data change.
    let runs = use_answer(
        move || Some((state.options.get(), asked.get())),
        |(options, query)| Ask::Runs {
            options: options.clone(),
            query: query.clone(),
        },
        |body, _| match body {
            Reply::Runs(page) => Some(page.map(|p| Shared(Arc::new(p)))),
            _ => None,
        },
    );
    // The answer shown: the latest for these options, filter and order (a window of another
    // scroll position stays until the new one comes: nothing blinks). A window for another
    // filter or order stays until the new one comes (marked busy): the controls and the table
    // never blink out while the worker selects.
    let shown = Memo::new(move |_| {
        let options = state.options.get();
        runs.last()
            .filter(|((o, _), _)| *o == options)
            .map(|((_, a), p)| (a, p))
    });
    let stale = Memo::new(move |_| {
        let q = asked.get();
        shown.with(|s| {
            s.as_ref().is_some_and(|(a, _)| {
                a.filter != q.filter || a.order != q.order || a.search != q.search
            })
        })
    });
    view! {
        <h1>"Runs"</h1>
        <p class="lede">
            "Every run — a model's attempt at a question — with its verdict, what it read of the \
             question's evidence and what it did. Filter and sort by any column; a row opens its \
             question, with the run's trajectory when one is loaded."
        </p>
        {move || shown.get().and_then(|(_, p)| p.ok()).map(|p| controls(query, &p))}
        {search_box(query)}
        {move || search.current().map(|s| search_state(search, &s))}
        {move || {
            let none = state.snapshot.with(|s| !s.files.is_empty() && s.trajectories.iter().all(|t| t.runs == 0));
            (none && searched.get().is_some()).then(|| view! {
                <p class="empty">"No trajectories file is loaded: there are no steps to search. Add one (*.trajectories.jsonl) beside the answers."</p>
            })
        }}
        {move || match shown.get() {
            None => view! { <p aria-busy="true">"Reading the runs…"</p> }.into_any(),
            Some((_, Err(e))) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
            Some((_, Ok(p))) if p.total == 0 => view! {
                <crate::problems::WhyEmpty
                    state=state
                    needs=RecordKind::Answer
                    fallback="No answers are loaded: the runs are the answer records."
                />
            }
                .into_any(),
            Some((_, Ok(p))) => view! {
                {pair_link(picked)}
                <div aria-busy=move || stale.get().to_string()>{table(query, &p, start, picked)}</div>
            }
            .into_any(),
        }}
    }
}

/// A search over every run, as the page holds it.
type Search = Answer<(String, bool), SearchState>;

/// Starts the search the address asks for (`&q=…&re=1`) when it is not the one under way (and
/// again after a load), and stops it when the address no longer asks for one.
fn follow_search(state: AppState, searched: Memo<Option<(String, bool)>>) -> Search {
    // Nothing to search before a trajectories file is held (a search asked before the load
    // would end at once, empty).
    let wanted = move || {
        let held = state
            .snapshot
            .with(|s| s.trajectories.iter().any(|t| t.runs > 0));
        searched.get().filter(|_| held)
    };
    let search = use_answer(
        wanted,
        |(query, regex)| Ask::Search {
            query: query.clone(),
            regex: *regex,
        },
        |body, before: Option<&SearchState>| match body {
            // Each reply brings its new hits and errors: those before are kept.
            Reply::Search(s) => Some(match before {
                Some(c) if c.stopped => c.clone(),
                Some(c) => {
                    let mut hits = c.hits.clone();
                    hits.extend(s.hits.iter().cloned());
                    let mut errors = c.errors.clone();
                    errors.extend(s.errors.iter().cloned());
                    SearchState { hits, errors, ..s }
                }
                None => s,
            }),
            _ => None,
        },
    );
    Effect::new(move |was: Option<bool>| {
        let on = wanted().is_some();
        if was == Some(true) && !on {
            crate::transport::post(&Request::StopSearch, None);
        }
        on
    });
    search
}

/// The search over every step of every run: text, and whether it is a regular expression.
fn search_box(query: Memo<ParamsMap>) -> impl IntoView {
    let navigate = use_navigate();
    let input = NodeRef::<html::Input>::new();
    let regex = NodeRef::<html::Input>::new();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let text = input.get_untracked().map(|i| i.value()).unwrap_or_default();
        let re = regex.get_untracked().is_some_and(|r| r.checked());
        let text = text.trim();
        navigate(
            &href(&[
                ("q", (!text.is_empty()).then_some(text)),
                ("re", re.then_some("1")),
            ]),
            Default::default(),
        );
    };
    view! {
        <form class="controls run-search" role="search" on:submit=submit>
            <label>
                "Search every step of every run "
                <input
                    type="search"
                    name="q"
                    node_ref=input
                    placeholder="a command, a path, an error"
                    prop:value=move || query.get().get("q").unwrap_or_default()
                />
            </label>
            <label>
                <input type="checkbox" name="re" node_ref=regex prop:checked=move || query.get().get("re").as_deref() == Some("1") />
                " regular expression"
            </label>
            <button type="submit">"Search"</button>
        </form>
    }
}

/// Where the search stands, and its hits: each a link to its step.
fn search_state(search: Search, s: &SearchState) -> impl IntoView + use<> {
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    let status = if s.done && !s.stopped {
        "searched"
    } else if s.stopped {
        "stopped after"
    } else {
        "searching:"
    };
    let line = format!(
        "{status} {} of {} ({} of {} runs) — {} run(s) with a hit",
        mb(s.bytes_read),
        mb(s.bytes),
        s.runs_read,
        s.runs,
        s.runs_hit
    );
    let shown = 200;
    let more = s.hits.len().saturating_sub(shown);
    view! {
        <div class="search-state">
            <p id="search-state" data-done=s.done.to_string() data-runs-hit=s.runs_hit data-hits=s.hits.len() aria-live="polite">
                {line}
                {(!s.done).then(|| view! {
                    " " <button type="button" on:click=move |_| stop(search)>"Stop"</button>
                })}
            </p>
            {s.errors.iter().map(|e| view! { <p class="error">{e.clone()}</p> }).collect_view()}
            <ol id="search-hits">
                {s.hits.iter().take(shown).map(hit).collect_view()}
            </ol>
            {(more > 0).then(|| view! { <p>{format!("{more} more hit(s) not listed: the table below has every run with one.")}</p> })}
        </div>
    }
}

/// Stops the search under way: the worker says nothing more of it; the page says it stopped.
fn stop(search: Search) {
    crate::transport::post(&Request::StopSearch, None);
    search.update(|s| {
        s.stopped = true;
        s.done = true;
    });
}

fn hit(h: &SearchHit) -> impl IntoView + use<> {
    let link = view_href(
        crate::View::Question,
        &[
            ("id", &h.key.question_id),
            ("model", &h.key.model),
            ("att", &h.key.attempt.to_string()),
            ("step", &h.step.to_string()),
        ],
    );
    let name = format!(
        "{} · {} · attempt {} · step {}",
        h.key.question_id, h.key.model, h.key.attempt, h.step
    );
    view! {
        <li>
            <a href=link>{name}</a> ": "
            <span class="context">"…" {h.before.clone()} <mark>{h.matched.clone()}</mark> {h.after.clone()} "…"</span>
        </li>
    }
}

/// A run picked for side by side.
type Picked = repoprobe_core::AnswerKey;

/// The link to the two runs picked side by side (two of one question), or what to pick.
fn pair_link(picked: RwSignal<Vec<Picked>>) -> impl IntoView {
    move || {
        let p = picked.get();
        match p.as_slice() {
            [a, b] if a.question_id == b.question_id => {
                let href = view_href(
                    crate::View::Compare,
                    &[
                        ("id", &a.question_id),
                        ("a", &format!("{}:{}", a.model, a.attempt)),
                        ("b", &format!("{}:{}", b.model, b.attempt)),
                    ],
                );
                view! { <p class="pair"><a id="side-by-side" href=href>{format!("Side by side: {} attempt {} and {} attempt {} on {}", a.model, a.attempt, b.model, b.attempt, a.question_id)}</a></p> }.into_any()
            }
            [a, b] => view! { <p class="pair">{format!("Pick two runs of one question to see them side by side ({} and {} are not).", a.question_id, b.question_id)}</p> }.into_any(),
            _ => view! { <p class="pair muted">"Tick two runs of one question (Compare column) to see them side by side."</p> }.into_any(),
        }
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
fn table(
    query: Memo<ParamsMap>,
    p: &RunsPage,
    start: RwSignal<usize>,
    picked: RwSignal<Vec<Picked>>,
) -> impl IntoView + use<> {
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
        .map(|(r, &t)| row(r, t, picked).into_any())
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
                        <th scope="col">"Compare"</th>
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

fn row(r: &RunRow, trajectory: bool, picked: RwSignal<Vec<Picked>>) -> impl IntoView + use<> {
    let me: Picked = r.key().to_key();
    let mine = me.clone();
    let tick = move |ev: leptos::ev::Event| {
        let on = event_target_checked(&ev);
        picked.update(|p| {
            p.retain(|x| x != &me);
            if on {
                p.push(me.clone());
                if p.len() > 2 {
                    p.remove(0);
                }
            }
        });
    };
    let open = view_href(
        crate::View::Question,
        &[
            ("id", &r.question_id),
            ("model", &r.model),
            ("att", &r.attempt.to_string()),
        ],
    );
    let cells: Vec<Cell> = run_cells(r);
    let numeric = [2usize, 5, 6, 9, 10, 12, 14, 15, 16];
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
            <td>
                {trajectory.then(|| view! {
                    <input
                        type="checkbox"
                        class="pick"
                        aria-label=format!("compare {} {} attempt {}", mine.question_id, mine.model, mine.attempt)
                        prop:checked=move || picked.with(|p| p.contains(&mine))
                        on:change=tick.clone()
                    />
                })}
            </td>
        </tr>
    }
}
