//! The head of the question view: the pager, the question and where it comes from, the
//! reference answer, and the choice of the answer to read.

use super::shown::{CommitLink, Shown};
use crate::components::markdown::{FileLinks, Markdown, linked_text};
use crate::{href, view_href};
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;

/// The previous and next questions, the question, its repository at the pinned commit, what is
/// still being read or could not be, and the reference answer.
pub fn head(
    s: &Shown,
    (prev, next): (Option<String>, Option<String>),
    links: &Option<FileLinks>,
) -> impl IntoView + use<> {
    let question = &s.question;
    let repo = &question.repo;
    let commit = match s.commit_link.clone() {
        Some(CommitLink::Link(url)) => view! { <a href=url rel="noopener noreferrer">{format!("commit {}", repoprobe_core::text::prefix(&repo.commit, 12).0)}</a> }.into_any(),
        Some(CommitLink::Text(text)) => view! { <span class="url-text" title="not an http(s) URL, so not a link">{text}</span> }.into_any(),
        None => view! { <span>"commit not given"</span> }.into_any(),
    };
    view! {
        <nav class="pager" aria-label="Questions">
            {prev.map(|p| view! { <a rel="prev" href=view_href(crate::View::Question, &[("id", &p)])>{format!("← {p}")}</a> })}
            <a href=view_href(crate::View::Questions, &[])>"All questions"</a>
            {next.map(|n| view! { <a rel="next" href=view_href(crate::View::Question, &[("id", &n)])>{format!("{n} →")}</a> })}
            <span class="hint">"Keys: j / k question, n / p item, m / M model, ? all keys"</span>
        </nav>
        <h1>{question.id.clone()}</h1>
        <p class="meta">
            {format!("{} · {} · {} · {}", question.category, repo.language, repo.theme, repo.name)}
            " · "
            {commit}
        </p>
        {s.texts_error.clone().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        {s.loading.then(|| view! {
            <p class="muted question-loading" role="status">"Reading this question's answers and judgments from the files…"</p>
        })}
        <h2>"Question"</h2>
        <p class="prose">{linked_text(&question.question, links.as_ref())}</p>
        <details class="reference">
            <summary>"Reference answer"</summary>
            <Markdown tree=s.reference_md.clone() fallback=question.reference_answer.clone() links=links.clone() />
        </details>
    }
}

/// The model whose answer to read against the checklist, and its attempt.
pub fn reader_controls(s: &Shown) -> impl IntoView + use<> {
    let nav = use_navigate();
    let navigate_model = move |v: &str| {
        nav(
            &href(&[("model", (!v.is_empty()).then_some(v)), ("att", None)]),
            Default::default(),
        );
    };
    let nav = use_navigate();
    let navigate_attempt = move |v: &str| nav(&href(&[("att", Some(v))]), Default::default());
    let attempt = s.attempt;
    let attempts = s.attempts.clone();
    view! {
        <div class="reader-controls">
            <label>
                "Read the answer of "
                <select
                    aria-label="Model whose answer to read against the checklist"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        navigate_model(&v);
                    }
                    prop:value=s.model.clone().unwrap_or_default()
                >
                    <option value="">"no model: the checklist alone"</option>
                    {s.models.iter().map(|m| view! { <option value=m.clone()>{m.clone()}</option> }).collect_view()}
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
    }
}
