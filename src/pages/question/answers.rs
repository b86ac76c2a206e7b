//! The answers: what each run cost and did, two side by side, and every one.

use crate::components::markdown::{FileLinks, Markdown, linked_text};
use crate::href;
use crate::markdown::Md;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use repoprobe_core::Answer;
use repoprobe_core::model::agent::AgentBlock;
use repoprobe_core::sort::SharedSort;

/// Every answer, folded: its run's evidence, its error, its text.
pub fn every_answer(
    answers: Vec<(Answer, Option<Md>)>,
    links: &Option<FileLinks>,
) -> impl IntoView + use<> {
    let links = links.clone();
    view! {
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
}

/// What the run of one answer cost and did: turns, tokens, cost, duration, the agent and its
/// version, and whether it edited the repository (with the files it changed).
pub fn evidence_view(a: &Answer, links: Option<&FileLinks>) -> impl IntoView + use<> {
    // The block read once, in the one typed form `repoprobe answer` writes.
    let agent = AgentBlock::of(a).cloned().unwrap_or_default();
    let usage = a.usage.clone().unwrap_or_default();
    let mut rows: Vec<(&'static str, String)> = Vec::new();
    if let Some(t) = agent.turns {
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
    if let Some(name) = &agent.name {
        let version = agent
            .version
            .as_ref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        rows.push(("Agent", format!("{name}{version}")));
    }
    if let Some(c) = agent.worktree_changed {
        rows.push((
            "Edited the repository",
            if c {
                "yes (worktree_changed: edit bias)".into()
            } else {
                "no".into()
            },
        ));
    }
    let files = agent.changed_paths();
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
pub fn SideBySide(answers: Vec<(Answer, Option<Md>)>, links: Option<FileLinks>) -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let models: Vec<String> = {
        let mut m: Vec<String> = answers.iter().map(|(a, _)| a.model.clone()).collect();
        m.shared_sort();
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
