//! All questions with filters (category, theme, language, repository), search, and sorting by
//! difficulty (the mean score all models got on it, under the judge in force).

use crate::href;
use crate::problems::WhyEmpty;
use crate::state::AppState;
use crate::view_href;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use leptos_router::params::ParamsMap;
use repoprobe_core::metrics::difficulty;
use repoprobe_core::sort::CollectTree;
use repoprobe_core::sort::SharedSort;
use repoprobe_core::{Question, RecordKind, report};
use std::collections::{BTreeMap, BTreeSet};

#[component]
pub fn Questions() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    // Mean score per question over every judgment of the judge in force (percent): its items'
    // attainment weighted by the weights in force (the checklist's own unless re-weighted).
    let items = crate::requests::use_items(state);
    let difficulty = Memo::new(move |_| {
        let rules = crate::options::parsed_rules(&state.options.get().weights);
        let snapshot = state.snapshot.get();
        items
            .get()
            .map(|items| difficulty::by_question(&items, &snapshot.questions, &rules))
            .unwrap_or_default()
    });
    let filter = move |key, label, values| filter(query, key, label, values);
    let values = move |f: fn(&repoprobe_core::Question) -> String| {
        Memo::new(move |_| state.snapshot.get().questions.iter().map(f).collect_set())
    };
    let navigate = use_navigate();
    view! {
        <h1>"Questions"</h1>
        <div class="controls">
            {filter("category", "Category", values(|q| q.category.clone()))}
            {filter("theme", "Theme", values(|q| q.repo.theme.clone()))}
            {filter("language", "Language", values(|q| q.repo.language.clone()))}
            {filter("repo", "Repository", values(|q| q.repo.name.clone()))}
            <label>
                "Search "
                <input
                    type="search"
                    placeholder="words in the question"
                    prop:value=move || query.get().get("q").unwrap_or_default()
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        navigate(&href(&[("q", (!v.is_empty()).then_some(v.as_str()))]), Default::default());
                    }
                />
            </label>
            <a href=move || { query.track(); href(&[("sort", Some("difficulty"))]) }>"Hardest first"</a>
            <a href=move || { query.track(); href(&[("sort", None)]) }>"By id"</a>
        </div>
        {move || {
            let q = query.get();
            let l = state.snapshot.get();
            if l.questions.is_empty() {
                return view! {
                    <WhyEmpty
                        state=state
                        needs=RecordKind::Question
                        fallback="No questions are loaded yet: drop a benchmark file (JSON or JSONL) on the page."
                    />
                }
                .into_any();
            }
            let diff = difficulty.get();
            table(listed(&l.questions, &q, &diff), &diff, &state.options.get().drop)
            .into_any()
        }}
    }
}

/// A select of the address's `key` (`values`, or all).
fn filter(
    query: Memo<ParamsMap>,
    key: &'static str,
    label: &'static str,
    values: Memo<BTreeSet<String>>,
) -> impl IntoView {
    let navigate = use_navigate();
    view! {
        <label>
            {label} " "
            <select
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    navigate(&href(&[(key, (!v.is_empty()).then_some(v.as_str()))]), Default::default());
                }
                prop:value=move || query.get().get(key).unwrap_or_default()
            >
                <option value="">"all"</option>
                {move || values.get().into_iter().map(|v| view! { <option value=v.clone()>{v.clone()}</option> }).collect_view()}
            </select>
        </label>
    }
}

/// The questions the address's filters and search keep, by id or hardest first (`&sort=`).
fn listed<'q>(
    questions: &'q [Question],
    q: &ParamsMap,
    diff: &BTreeMap<String, f64>,
) -> Vec<&'q Question> {
    let needle = q.get("q").map(|s| s.to_lowercase());
    let mut list: Vec<_> = questions
        .iter()
        .filter(|x| q.get("category").is_none_or(|c| x.category == c))
        .filter(|x| q.get("theme").is_none_or(|c| x.repo.theme == c))
        .filter(|x| q.get("language").is_none_or(|c| x.repo.language == c))
        .filter(|x| q.get("repo").is_none_or(|c| x.repo.name == c))
        .filter(|x| {
            needle.as_ref().is_none_or(|n| {
                x.question.to_lowercase().contains(n) || x.id.to_lowercase().contains(n)
            })
        })
        .collect();
    if q.get("sort").as_deref() == Some("difficulty") {
        list.shared_sort_by(|a, b| {
            let (x, y) = (
                diff.get(&a.id).copied().unwrap_or(f64::INFINITY),
                diff.get(&b.id).copied().unwrap_or(f64::INFINITY),
            );
            x.total_cmp(&y).then_with(|| a.id.cmp(&b.id))
        });
    } else {
        list.shared_sort_by(|a, b| a.id.cmp(&b.id));
    }
    list
}

/// The questions listed, with their mean score and whether they count.
fn table(
    list: Vec<&Question>,
    diff: &BTreeMap<String, f64>,
    dropped: &[String],
) -> impl IntoView + use<> {
    let n = list.len();
    view! {
        <p>{format!("{n} question(s)")}</p>
        <div class="table-scroll">
        <table class="questions">
            <thead>
                <tr>
                    <th scope="col">"Question"</th>
                    <th scope="col">"Repository"</th>
                    <th scope="col">"Category"</th>
                    <th scope="col">"Language"</th>
                    <th scope="col" class="num">"Mean score (%)"</th>
                    <th scope="col">"Counted"</th>
                </tr>
            </thead>
            <tbody>
                {list
                    .into_iter()
                    .take(1000)
                    .map(|x| {
                        let text = repoprobe_core::text::prefix(&x.question, 140).0.to_string();
                        view! {
                            <tr>
                                <th scope="row">
                                    <a href=view_href(crate::View::Question, &[("id", &x.id)])>{x.id.clone()}</a>
                                    <span class="qtext">{text}</span>
                                </th>
                                <td>{x.repo.name.clone()}</td>
                                <td>{x.category.clone()}</td>
                                <td>{x.repo.language.clone()}</td>
                                <td class="num">{report::pct(diff.get(&x.id).copied())}</td>
                                <td>{counted(&x.id, dropped)}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
        </div>
    }
}

/// The "counted" switch of a question: unchecking it drops the question from every number
/// (the URL's `drop`, the same as `repoprobe score --drop-question`).
fn counted(id: &str, dropped: &[String]) -> impl IntoView + use<> {
    let is_dropped = dropped.iter().any(|d| d == id);
    let mut toggled: Vec<String> = dropped.iter().filter(|d| *d != id).cloned().collect();
    if !is_dropped {
        toggled.push(id.to_string());
    }
    let param = crate::options::parse_drop(&toggled.join(","));
    let label = format!("count {id} in every number");
    let navigate = use_navigate();
    view! {
        <input
            type="checkbox"
            aria-label=label
            prop:checked=!is_dropped
            on:change=move |_| {
                let v = param.join(",");
                navigate(&href(&[("drop", (!v.is_empty()).then_some(v.as_str()))]), Default::default());
            }
        />
    }
}
