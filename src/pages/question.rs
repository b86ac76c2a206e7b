//! One question: the question, repository at its pinned commit, reference answer, every
//! checklist item with its rubric, the item × model matrix of scores (each cell opens the judge's
//! rationales), each model's answer, and two answers side by side. `j`/`k` (or the arrow keys)
//! go to the next/previous question.

use crate::protocol::{set_weight, weights_in_force};
use crate::state::AppState;
use crate::{external_href, href, view_href};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use repoprobe_core::{ChecklistItem, ItemKind, Judgment, Question, WeightRule};
use std::collections::BTreeMap;

#[component]
pub fn QuestionDetail() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let navigate = use_navigate();
    // Previous and next question ids, in id order.
    let neighbours = Memo::new(move |_| {
        let id = query.get().get("id").unwrap_or_default();
        let l = state.snapshot.get();
        let mut ids: Vec<&str> = l.questions.iter().map(|q| q.id.as_str()).collect();
        ids.sort_unstable();
        let pos = ids.iter().position(|x| *x == id);
        let prev = pos
            .and_then(|p| p.checked_sub(1))
            .and_then(|p| ids.get(p))
            .map(|s| s.to_string());
        let next = pos.and_then(|p| ids.get(p + 1)).map(|s| s.to_string());
        (prev, next)
    });
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
        models.sort_unstable();
        models.dedup();
        (items, models)
    });
    let handle = window_event_listener(leptos::ev::keydown, move |ev: web_sys::KeyboardEvent| {
        let tag = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .map(|e| e.tag_name())
            .unwrap_or_default();
        if matches!(tag.as_str(), "INPUT" | "SELECT" | "TEXTAREA")
            || ev.ctrl_key()
            || ev.meta_key()
            || ev.alt_key()
        {
            return;
        }
        let key = ev.key();
        if matches!(key.as_str(), "n" | "p" | "m" | "M") {
            let (items, models) = cursors.get_untracked();
            let q = query.get_untracked();
            let step =
                |list: &[String], current: Option<String>, forward: bool| -> Option<String> {
                    let n = list.len();
                    if n == 0 {
                        return None;
                    }
                    let pos = current.and_then(|c| list.iter().position(|x| *x == c));
                    let i = match (pos, forward) {
                        (None, _) => 0,
                        (Some(p), true) => (p + 1) % n,
                        (Some(p), false) => (p + n - 1) % n,
                    };
                    Some(list[i].clone())
                };
            let (item, model) = match key.as_str() {
                "n" | "p" => (
                    step(&items, q.get("item"), key == "n"),
                    q.get("model").or_else(|| models.first().cloned()),
                ),
                _ => (
                    q.get("item").or_else(|| items.first().cloned()),
                    step(&models, q.get("model"), key == "m"),
                ),
            };
            navigate(
                &href(&[("item", item.as_deref()), ("model", model.as_deref())]),
                Default::default(),
            );
            return;
        }
        let (prev, next) = neighbours.get_untracked();
        let target = match key.as_str() {
            "j" | "ArrowRight" => next,
            "k" | "ArrowLeft" => prev,
            _ => None,
        };
        if let Some(id) = target {
            navigate(
                &href(&[("id", Some(&id)), ("model", None), ("item", None)]),
                Default::default(),
            );
        }
    });
    on_cleanup(move || handle.remove());

    view! {
        {move || {
            let q = query.get();
            let id = q.get("id").unwrap_or_default();
            let Some(question) = state.snapshot.get().question(&id).cloned() else {
                return view! {
                    <h1>"Question not found"</h1>
                    <p>{format!("No question with id {id:?} is loaded.")}</p>
                    <a href=view_href("questions", &[])>"All questions"</a>
                }
                    .into_any();
            };
            let judge = state.report.get().ok().and_then(|r| r.judge.clone()).unwrap_or_default();
            // Judgments of this question by the judge in force, per model, in (attempt, run) order.
            let mut by_model: BTreeMap<String, Vec<Judgment>> = BTreeMap::new();
            // Judgments and answers come from the worker, asked for on the first visit.
            crate::state::request_question(state, &id);
            let data = state.questions.get().get(&id).cloned();
            for j in data.iter().flat_map(|d| d.judgments.iter()).filter(|j| j.judge == judge) {
                by_model.entry(j.model.clone()).or_default().push(j.clone());
            }
            for v in by_model.values_mut() {
                v.sort_unstable_by_key(|j| (j.attempt, j.judge_run));
            }
            let answers: Vec<_> = data.iter().flat_map(|d| d.answers.iter()).cloned().collect();
            let sel_model = q.get("model");
            let sel_item = q.get("item");
            let (prev, next) = neighbours.get();
            let repo = question.repo.clone();
            // A link only to an http(s) URL (`external_href`); any other URL is shown as text.
            let commit_link = (!repo.url.is_empty() && !repo.commit.is_empty()).then(|| {
                let url = format!("{}/tree/{}", repo.url.trim_end_matches('/'), repo.commit);
                external_href(&url).ok_or(url)
            });
            let items = question.checklist.clone();
            let rules = state.options.get().weights;
            let in_force = weights_in_force(&rules, &question);
            let rationale = sel_model.as_ref().zip(sel_item.as_ref()).map(|(m, it)| {
                let js = by_model.get(m).cloned().unwrap_or_default();
                let rows: Vec<_> = js
                    .iter()
                    .filter_map(|j| j.items.iter().find(|x| &x.id == it).map(|x| (j.attempt, j.judge_run, x.score, x.rationale.clone())))
                    .collect();
                (m.clone(), it.clone(), rows)
            });
            view! {
                <nav class="pager" aria-label="Questions">
                    {prev.map(|p| view! { <a rel="prev" href=view_href("question", &[("id", &p)])>{format!("← {p}")}</a> })}
                    <a href=view_href("questions", &[])>"All questions"</a>
                    {next.map(|n| view! { <a rel="next" href=view_href("question", &[("id", &n)])>{format!("{n} →")}</a> })}
                    <span class="hint">"Keys: j / k question, n / p item, m / M model"</span>
                </nav>
                <h1>{question.id.clone()}</h1>
                <p class="meta">
                    {format!("{} · {} · {} · {}", question.category, repo.language, repo.theme, repo.name)}
                    " · "
                    {match commit_link {
                        Some(Ok(url)) => view! { <a href=url rel="noopener noreferrer">{format!("commit {}", repo.commit.chars().take(12).collect::<String>())}</a> }.into_any(),
                        Some(Err(text)) => view! { <span class="url-text" title="not an http(s) URL, so not a link">{text}</span> }.into_any(),
                        None => view! { <span>"commit not given"</span> }.into_any(),
                    }}
                </p>
                <h2>"Question"</h2>
                <p class="prose">{question.question.clone()}</p>
                <details>
                    <summary>"Reference answer"</summary>
                    <p class="prose">{question.reference_answer.clone()}</p>
                </details>
                <h2>"Checklist"</h2>
                <ol class="checklist">
                    {items
                        .iter()
                        .zip(in_force)
                        .map(|(it, w)| {
                            view! {
                                <li id=format!("item-{}", it.id)>
                                    <strong>{format!("{} ({}, {} point{})", it.id, if it.kind == ItemKind::Clarity { "clarity" } else { "knowledge" }, it.weight, if it.weight == 1 { "" } else { "s" })}</strong>
                                    " "
                                    {weight_input(&rules, &question, it, w)}
                                    " "
                                    {it.key_point.clone()}
                                    <ul class="rubric">
                                        {it.rubric.iter().map(|t| view! { <li><b>{t.score}</b> " " {t.criterion.clone()}</li> }).collect_view()}
                                    </ul>
                                </li>
                            }
                        })
                        .collect_view()}
                </ol>
                <h2>{format!("Scores by judge {judge}")}</h2>
                <div class="table-scroll">
                    <table class="matrix">
                        <caption>"Item × model; a cell lists each judge run's score, click it for the rationales"</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Model"</th>
                                {items.iter().map(|it| view! { <th scope="col">{format!("{} /{}", it.id, it.weight)}</th> }).collect_view()}
                                <th scope="col" class="num">"Total"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {by_model
                                .iter()
                                .map(|(m, js)| {
                                    let totals: Vec<String> = js.iter().map(|j| j.items.iter().map(|x| x.score).sum::<u32>().to_string()).collect();
                                    view! {
                                        <tr>
                                            <th scope="row">{m.clone()}</th>
                                            {items
                                                .iter()
                                                .map(|it| {
                                                    let scores: Vec<String> = js
                                                        .iter()
                                                        .filter_map(|j| j.items.iter().find(|x| x.id == it.id).map(|x| x.score.to_string()))
                                                        .collect();
                                                    let full = js.iter().all(|j| j.items.iter().any(|x| x.id == it.id && x.score == it.weight));
                                                    let link = href(&[("model", Some(m)), ("item", Some(&it.id))]);
                                                    view! {
                                                        <td class="num" class:full=full>
                                                            <a href=link title="Show the judge's rationales">{scores.join(" / ")}</a>
                                                        </td>
                                                    }
                                                })
                                                .collect_view()}
                                            <td class="num">{totals.join(" / ")}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
                {rationale.map(|(m, it, rows)| view! {
                    <section class="rationale" aria-live="polite">
                        <h3>{format!("Why {m} got these scores on {it}")}</h3>
                        {if rows.is_empty() {
                            view! { <p>"No judgment of this item."</p> }.into_any()
                        } else {
                            rows.into_iter()
                                .map(|(attempt, run, score, text)| view! {
                                    <div class="run">
                                        <p><b>{format!("attempt {attempt}, judge run {run}: score {score}")}</b></p>
                                        <p class="prose">{text}</p>
                                    </div>
                                })
                                .collect_view()
                                .into_any()
                        }}
                    </section>
                })}
                <h2>"Answers"</h2>
                <SideBySide answers=answers.clone() />
                {answers
                    .into_iter()
                    .map(|a| {
                        let title = format!("{} (attempt {}){}", a.model, a.attempt, if a.error.is_some() { " — failed run" } else { "" });
                        view! {
                            <details class="answer">
                                <summary>{title}</summary>
                                {a.error.map(|e| view! { <p class="error">{e}</p> })}
                                <p class="prose">{a.answer.unwrap_or_default()}</p>
                            </details>
                        }
                    })
                    .collect_view()}
            }
                .into_any()
        }}
    }
}

/// Two models' answers side by side (`?a=...&b=...`).
#[component]
fn SideBySide(answers: Vec<repoprobe_core::Answer>) -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let models: Vec<String> = {
        let mut m: Vec<String> = answers.iter().map(|a| a.model.clone()).collect();
        m.sort_unstable();
        m.dedup();
        m
    };
    let answers = StoredValue::new(answers);
    let pick = move |key: &'static str| {
        let navigate = navigate.clone();
        let models = models.clone();
        view! {
            <select
                aria-label=format!("Answer {}", key.to_uppercase())
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    navigate(&href(&[(key, (!v.is_empty()).then_some(v.as_str()))]), Default::default());
                }
                prop:value=move || query.get().get(key).unwrap_or_default()
            >
                <option value="">"choose a model"</option>
                {models.iter().map(|m| view! { <option value=m.clone()>{m.clone()}</option> }).collect_view()}
            </select>
        }
    };
    let column = move |key: &'static str| {
        move || {
            let m = query.get().get(key)?;
            let text = answers.with_value(|a| {
                a.iter().find(|x| x.model == m).map(|x| {
                    x.answer
                        .clone()
                        .unwrap_or_else(|| x.error.clone().unwrap_or_default())
                })
            })?;
            Some(view! { <div class="side"><h3>{m}</h3><p class="prose">{text}</p></div> })
        }
    };
    view! {
        <div class="side-by-side-controls">"Compare answers: " {pick("a")} " and " {pick("b")}</div>
        <div class="side-by-side">{column("a")} {column("b")}</div>
    }
}

/// Live re-weighting of one item: the number is the weight it has in every table now; changing
/// it sets the rule `QUESTION/ITEM=W` of the URL (`repoprobe score --weight`), or removes it when
/// the item is back at the weight it would have without it.
fn weight_input(
    rules: &[String],
    q: &Question,
    it: &ChecklistItem,
    w: u32,
) -> impl IntoView + use<> {
    let target = format!("{}/{}", q.id, it.id);
    let without = set_weight(rules, &target, None);
    let position = q.checklist.iter().position(|c| c.id == it.id).unwrap_or(0);
    let falls_back_to = weights_in_force(&without, q)
        .get(position)
        .copied()
        .unwrap_or(it.weight);
    let navigate = use_navigate();
    let label = format!("Weight of {} in every table", it.id);
    let changed = w != it.weight;
    view! {
        <label class="weight" class:changed=changed title="Weigh this item otherwise in every number (its judged attainment, score / own weight, stays)">
            "weight "
            <input
                type="number"
                min="0"
                max=WeightRule::MAX.to_string()
                step="1"
                aria-label=label
                prop:value=w.to_string()
                on:change=move |ev| {
                    let Ok(new) = event_target_value(&ev).trim().parse::<u32>() else { return };
                    let rules = if new == falls_back_to { without.clone() } else { set_weight(&without, &target, Some(new)) };
                    navigate(&crate::pages::controls::weights_href(&rules), Default::default());
                }
            />
        </label>
    }
}
