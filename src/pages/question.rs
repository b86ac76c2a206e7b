//! One question: the question, repository at its pinned commit, reference answer, every
//! checklist item with its rubric, the item × model matrix of scores (each cell opens the judge's
//! rationales), each model's answer, and two answers side by side. `j`/`k` (or the arrow keys)
//! go to the next/previous question.

use crate::components::markdown::{FileLinks, Markdown, linked_text};
use crate::markdown::Md;
use crate::options::{set_weight, weights_in_force};
use crate::state::AppState;
use crate::{external_href, href, view_href};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use repoprobe_core::metrics::evidence::{changes, turns, worktree_changed};
use repoprobe_core::{Answer, ChecklistItem, ItemKind, Judgment, Question, WeightRule};
use std::collections::BTreeMap;
use wasm_bindgen::JsCast;

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
        if crate::components::help::not_a_shortcut(&ev) {
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
    let choose = use_navigate();
    // The view is built again when the question's answers and judgments arrive from the worker
    // (read back from the files, which can take seconds on a gigabyte): a re-weight panel the
    // reader opened meanwhile stays open.
    let reweight_open = RwSignal::new(false);

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
            crate::requests::request_question(state, &id);
            let data = state.questions.get().get(&id).cloned();
            for j in data.iter().flat_map(|d| d.judgments.iter()).filter(|j| j.judge == judge) {
                by_model.entry(j.model.clone()).or_default().push(j.clone());
            }
            for v in by_model.values_mut() {
                v.sort_unstable_by_key(|j| (j.attempt, j.judge_run));
            }
            // Each answer with its Markdown tree (parsed by the worker).
            let answers: Vec<(Answer, Option<Md>)> = data
                .iter()
                .flat_map(|d| d.answers.iter().enumerate().map(|(i, a)| (a.clone(), d.answers_md.get(i).cloned())))
                .collect();
            let reference_md = data.as_ref().and_then(|d| d.reference_md.clone());
            // The worker reads texts back from the files when a question is first viewed.
            let texts_error = data.as_ref().and_then(|d| d.texts_error.clone());
            let sel_model = q.get("model");
            let sel_item = q.get("item");
            let (prev, next) = neighbours.get();
            let repo = question.repo.clone();
            // A link only to an http(s) URL (`external_href`); any other URL is shown as text.
            let commit_link = (!repo.url.is_empty() && !repo.commit.is_empty()).then(|| {
                let url = format!("{}/tree/{}", repo.url.trim_end_matches('/'), repo.commit);
                external_href(&url).ok_or(url)
            });
            // Paths in answers and rationales link to the file at the pinned commit (known forges).
            let links = FileLinks::new(&repo.url, &repo.commit);
            let items = question.checklist.clone();
            let rules = state.options.get().weights;
            let in_force = weights_in_force(&rules, &question);
            let reweighted = items.iter().zip(&in_force).any(|(it, w)| *w != it.weight);
            // Every model with an answer or a judgment, and the chosen one's attempts.
            let mut models: Vec<String> = answers.iter().map(|(a, _)| a.model.clone()).chain(by_model.keys().cloned()).collect();
            models.sort_unstable();
            models.dedup();
            let mut attempts: Vec<u32> = sel_model
                .iter()
                .flat_map(|m| {
                    answers.iter().filter(move |(a, _)| &a.model == m).map(|(a, _)| a.attempt)
                        .chain(by_model.get(m).into_iter().flatten().map(|j| j.attempt))
                })
                .collect();
            attempts.sort_unstable();
            attempts.dedup();
            let attempt = q.get("att").and_then(|a| a.parse::<u32>().ok()).filter(|a| attempts.contains(a)).or_else(|| attempts.first().copied());
            // The chosen answer's judge runs, in run order.
            let runs: Vec<Judgment> = sel_model
                .as_ref()
                .and_then(|m| by_model.get(m))
                .map(|js| js.iter().filter(|j| Some(j.attempt) == attempt).cloned().collect())
                .unwrap_or_default();
            let chosen = sel_model.as_ref().and_then(|m| answers.iter().find(|(a, _)| &a.model == m && Some(a.attempt) == attempt).cloned());
            // Only once the question's judgments are here: before, an empty list would read as
            // "no judgment of this item" (the status line above says they are being read).
            let rationale = sel_model.as_ref().zip(sel_item.as_ref()).filter(|_| data.is_some()).map(|(m, it)| {
                let js = by_model.get(m).cloned().unwrap_or_default();
                let rows: Vec<_> = js
                    .iter()
                    .filter_map(|j| j.items.iter().find(|x| &x.id == it).map(|x| (j.attempt, j.judge_run, x.score, x.rationale.clone())))
                    .collect();
                (m.clone(), it.clone(), rows)
            });
            let reader = sel_model.is_some();
            let nav = choose.clone();
            let navigate_model = move |v: &str| {
                nav(&href(&[("model", (!v.is_empty()).then_some(v)), ("att", None)]), Default::default());
            };
            let nav = choose.clone();
            let navigate_attempt = move |v: &str| nav(&href(&[("att", Some(v))]), Default::default());
            view! {
                <nav class="pager" aria-label="Questions">
                    {prev.map(|p| view! { <a rel="prev" href=view_href("question", &[("id", &p)])>{format!("← {p}")}</a> })}
                    <a href=view_href("questions", &[])>"All questions"</a>
                    {next.map(|n| view! { <a rel="next" href=view_href("question", &[("id", &n)])>{format!("{n} →")}</a> })}
                    <span class="hint">"Keys: j / k question, n / p item, m / M model, ? all keys"</span>
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
                {texts_error.map(|e| view! { <p class="error" role="alert">{e}</p> })}
                {data.is_none().then(|| view! {
                    <p class="muted question-loading" role="status">"Reading this question's answers and judgments from the files…"</p>
                })}
                <h2>"Question"</h2>
                <p class="prose">{linked_text(&question.question, links.as_ref())}</p>
                <details class="reference">
                    <summary>"Reference answer"</summary>
                    <Markdown tree=reference_md fallback=question.reference_answer.clone() links=links.clone() />
                </details>
                <div class="reader-controls">
                    <label>
                        "Read the answer of "
                        <select
                            aria-label="Model whose answer to read against the checklist"
                            on:change=move |ev| {
                                let v = event_target_value(&ev);
                                navigate_model(&v);
                            }
                            prop:value=sel_model.clone().unwrap_or_default()
                        >
                            <option value="">"no model: the checklist alone"</option>
                            {models.iter().map(|m| view! { <option value=m.clone()>{m.clone()}</option> }).collect_view()}
                        </select>
                    </label>
                    {(attempts.len() > 1).then(|| view! {
                        <label>
                            " attempt "
                            <select
                                aria-label="Attempt"
                                on:change=move |ev| {
                                    let v = event_target_value(&ev);
                                    navigate_attempt(&v);
                                }
                                prop:value=attempt.map(|a| a.to_string()).unwrap_or_default()
                            >
                                {attempts.iter().map(|a| view! { <option value=a.to_string()>{a.to_string()}</option> }).collect_view()}
                            </select>
                        </label>
                    })}
                </div>
                <details
                    class="reweight"
                    open=reweighted || reweight_open.get_untracked()
                    on:toggle=move |ev| {
                        if let Some(d) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                            reweight_open.set(d.has_attribute("open"));
                        }
                    }
                >
                    <summary>"Re-weight this question"</summary>
                    <p class="hint">"A weight changes this item in every number of every view (the URL keeps it, as `repoprobe score --weight` does); its judged attainment, score / own weight, stays."</p>
                    <ul class="weights">
                        {items
                            .iter()
                            .zip(in_force.iter().copied())
                            .map(|(it, w)| view! { <li>{format!("{} ", it.id)} {weight_input(&rules, &question, it, w)} " " <span class="muted">{it.key_point.clone()}</span></li> })
                            .collect_view()}
                    </ul>
                </details>
                <div class="reading" class:with-answer=reader>
                    <section class="checklist-col" aria-labelledby="checklist-h">
                        <h2 id="checklist-h">
                            {match (&sel_model, attempt) {
                                (Some(m), Some(a)) => format!("Checklist, judged on {m}'s answer (attempt {a}) by {judge}"),
                                (Some(m), None) => format!("Checklist ({m}: no answer or judgment)"),
                                _ => "Checklist".to_string(),
                            }}
                        </h2>
                        <ol class="checklist">
                            {items
                                .iter()
                                .map(|it| checklist_item(it, &runs, reader, links.as_ref()))
                                .collect_view()}
                        </ol>
                    </section>
                    {sel_model.clone().map(|m| view! {
                        <section class="answer-col" aria-labelledby="answer-h">
                            <h2 id="answer-h">{match attempt { Some(a) => format!("Answer of {m} (attempt {a})"), None => format!("Answer of {m}") }}</h2>
                            {match chosen.clone() {
                                None => view! { <p class="empty">"No answer record of this model here (judgments alone)."</p> }.into_any(),
                                Some((a, md)) => view! {
                                    {evidence_view(&a, links.as_ref())}
                                    {a.error.clone().map(|e| view! { <p class="error">{format!("Failed run: {e}")}</p> })}
                                    <Markdown tree=md fallback=a.answer.clone().unwrap_or_default() links=links.clone() />
                                }.into_any(),
                            }}
                        </section>
                    })}
                </div>
                <h2>{format!("Scores by judge {judge}")}</h2>
                <div class="table-scroll">
                    <table class="matrix">
                        <caption>"Item × model; a cell lists each judge run's score; hover or focus it for the rationales, click to keep them below"</caption>
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
                                                    let found: Vec<_> = js
                                                        .iter()
                                                        .filter_map(|j| j.items.iter().find(|x| x.id == it.id).map(|x| (j, x)))
                                                        .collect();
                                                    let scores: Vec<String> = found.iter().map(|(_, x)| x.score.to_string()).collect();
                                                    let tip: String = found
                                                        .iter()
                                                        .map(|(j, x)| format!("attempt {}, run {}: {} — {}", j.attempt, j.judge_run, x.score, cut(&x.rationale, 280)))
                                                        .collect::<Vec<_>>()
                                                        .join("\n");
                                                    let full = js.iter().all(|j| j.items.iter().any(|x| x.id == it.id && x.score == it.weight));
                                                    let link = href(&[("model", Some(m)), ("item", Some(&it.id))]);
                                                    view! {
                                                        <td class="num cell" class:full=full>
                                                            <a href=link title="Keep the judge's rationales below">{scores.join(" / ")}</a>
                                                            {(!tip.is_empty()).then(|| view! { <span class="tip" role="tooltip">{tip}</span> })}
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
                                        <p class="prose">{linked_text(&text, links.as_ref())}</p>
                                    </div>
                                })
                                .collect_view()
                                .into_any()
                        }}
                    </section>
                })}
                <h2>"Answers side by side"</h2>
                <SideBySide answers=answers.clone() links=links.clone() />
                <details class="all-answers">
                    <summary>{format!("Every answer ({})", answers.len())}</summary>
                    {answers
                        .into_iter()
                        .map(|(a, md)| {
                            let title = format!("{} (attempt {}){}", a.model, a.attempt, if a.error.is_some() { " — failed run" } else { "" });
                            view! {
                                <details class="answer">
                                    <summary>{title}</summary>
                                    {evidence_view(&a, links.as_ref())}
                                    {a.error.clone().map(|e| view! { <p class="error">{e}</p> })}
                                    <Markdown tree=md fallback=a.answer.clone().unwrap_or_default() links=links.clone() />
                                </details>
                            }
                        })
                        .collect_view()}
                </details>
            }
                .into_any()
        }}
    }
}

/// `text` cut to `n` characters (an ellipsis when cut).
fn cut(text: &str, n: usize) -> String {
    let mut out: String = text.chars().take(n).collect();
    if text.chars().count() > n {
        out.push('…');
    }
    out
}

/// The chip of a score: full, partial or none, said in words (not colour alone).
/// Runs that agree share one chip, with their count (`× 3 runs`).
fn chip(score: u32, weight: u32, runs: usize) -> impl IntoView + use<> {
    let (class, word) = if score >= weight && weight > 0 {
        ("chip full", "full")
    } else if score == 0 {
        ("chip none", "none")
    } else {
        ("chip partial", "partial")
    };
    let times = if runs > 1 {
        format!(" × {runs} runs")
    } else {
        String::new()
    };
    view! { <span class=class>{format!("{word} {score}/{weight}{times}")}</span> }
}

/// One checklist item: its key point and rubric, and with a chosen answer each judge run's
/// score chip, the rubric tier reached and the rationale in place (disagreeing runs marked).
fn checklist_item(
    it: &ChecklistItem,
    runs: &[Judgment],
    reader: bool,
    links: Option<&FileLinks>,
) -> impl IntoView + use<> {
    let scored: Vec<(u32, u32, String)> = runs
        .iter()
        .filter_map(|j| {
            j.items
                .iter()
                .find(|x| x.id == it.id)
                .map(|x| (j.judge_run, x.score, x.rationale.clone()))
        })
        .collect();
    let mut distinct: Vec<u32> = scored.iter().map(|s| s.1).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let disagree = distinct.len() > 1;
    // The tier reached by a score: the highest rubric tier at or below it.
    let tier = |score: u32| {
        it.rubric
            .iter()
            .filter(|t| t.score <= score)
            .max_by_key(|t| t.score)
            .map(|t| t.score)
    };
    let reached: Vec<u32> = scored.iter().filter_map(|s| tier(s.1)).collect();
    let several = scored.len() > 1;
    let kind = if it.kind == ItemKind::Clarity {
        "clarity"
    } else {
        "knowledge"
    };
    view! {
        <li id=format!("item-{}", it.id)>
            <p class="item-head">
                <strong>{it.id.clone()}</strong>
                {format!(" ({kind}, {} point{}) ", it.weight, if it.weight == 1 { "" } else { "s" })}
                {distinct
                    .iter()
                    .rev()
                    .map(|&d| chip(d, it.weight, scored.iter().filter(|s| s.1 == d).count()))
                    .collect_view()}
                {disagree.then(|| view! { <span class="disagree">"judge runs disagree"</span> })}
            </p>
            <p class="key-point">{it.key_point.clone()}</p>
            <ul class="rubric" aria-label=format!("Rubric of {}", it.id)>
                {it.rubric
                    .iter()
                    .map(|t| {
                        let hit = reached.contains(&t.score);
                        view! {
                            <li class:reached=hit>
                                <b>{t.score}</b> " " {t.criterion.clone()}
                                {hit.then(|| view! { <span class="reached-mark">" ← reached"</span> })}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            {(reader && scored.is_empty()).then(|| view! { <p class="empty">"Not judged."</p> })}
            {scored
                .into_iter()
                .map(|(run, score, text)| view! {
                    <div class="item-rationale">
                        {several.then(|| view! { <span class="run-label">{format!("Judge run {run} ({score}): ")}</span> })}
                        {linked_text(&text, links)}
                    </div>
                })
                .collect_view()}
        </li>
    }
}

/// What the run of one answer cost and did: turns, tokens, cost, duration, the agent and its
/// version, and whether it edited the repository (with the files it changed).
fn evidence_view(a: &Answer, links: Option<&FileLinks>) -> impl IntoView + use<> {
    let agent = a.agent.as_ref();
    let field = |k: &str| {
        agent
            .and_then(|g| g.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let usage = a.usage.clone().unwrap_or_default();
    let mut rows: Vec<(&'static str, String)> = Vec::new();
    if let Some(t) = turns(a) {
        rows.push(("Turns", t.to_string()));
    }
    if usage.input_tokens.is_some() || usage.output_tokens.is_some() {
        let n = |x: Option<u64>| x.map_or("—".to_string(), |v| v.to_string());
        rows.push((
            "Tokens",
            format!(
                "{} in, {} out",
                n(usage.input_tokens),
                n(usage.output_tokens)
            ),
        ));
    }
    if let Some(c) = usage.cost_usd {
        rows.push(("Cost", format!("${c:.4}")));
    }
    if let Some(d) = a.duration_s {
        rows.push(("Duration", format!("{d:.1} s")));
    }
    if let Some(name) = field("name") {
        let version = field("version")
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        rows.push(("Agent", format!("{name}{version}")));
    }
    let changed = worktree_changed(a);
    if let Some(c) = changed {
        rows.push((
            "Edited the repository",
            if c {
                "yes (worktree_changed: edit bias)".into()
            } else {
                "no".into()
            },
        ));
    }
    let files = changes(a);
    (!rows.is_empty() || !files.is_empty()).then(|| {
        let links = links.cloned();
        view! {
            <dl class="evidence">
                {rows.into_iter().map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> }).collect_view()}
                {(!files.is_empty()).then(|| view! {
                    <div class="changes">
                        <dt>"Changed files"</dt>
                        <dd>
                            <ul>{files.iter().map(|f| view! { <li>{linked_text(f, links.as_ref())}</li> }).collect_view()}</ul>
                        </dd>
                    </div>
                })}
            </dl>
        }
    })
}

/// Two models' answers side by side (`?a=...&b=...`).
#[component]
fn SideBySide(answers: Vec<(Answer, Option<Md>)>, links: Option<FileLinks>) -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let models: Vec<String> = {
        let mut m: Vec<String> = answers.iter().map(|(a, _)| a.model.clone()).collect();
        m.sort_unstable();
        m.dedup();
        m
    };
    let answers = StoredValue::new(answers);
    let links = StoredValue::new(links);
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
            let (text, md) = answers.with_value(|a| {
                a.iter().find(|(x, _)| x.model == m).map(|(x, md)| {
                    let text = x
                        .answer
                        .clone()
                        .unwrap_or_else(|| x.error.clone().unwrap_or_default());
                    (text, md.clone().filter(|_| x.answer.is_some()))
                })
            })?;
            Some(
                view! { <div class="side"><h3>{m}</h3><Markdown tree=md fallback=text links=links.get_value() /></div> },
            )
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
