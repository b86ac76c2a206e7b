//! The checklist beside the chosen answer: each item's key point and rubric, and with an answer
//! each judge run's score chip, the rubric tier reached and the rationale in place.

use super::answers::evidence_view;
use super::shown::{ItemScores, Shown};
use crate::components::markdown::{FileLinks, Markdown, linked_text, path_link};
use leptos::prelude::*;
use repoprobe_core::{ChecklistItem, ItemKind, Judgment};
use std::collections::BTreeSet;

/// The checklist and, with a model chosen, its answer beside it.
pub fn reading(s: &Shown, links: &Option<FileLinks>) -> impl IntoView + use<> {
    let reader = s.model.is_some();
    let answer = s.model.clone().map(|m| {
        let heading = match s.attempt {
            Some(a) => format!("Answer of {m} (attempt {a})"),
            None => format!("Answer of {m}"),
        };
        let body = match s.chosen.clone() {
            None => view! { <p class="empty">"No answer record of this model here (judgments alone)."</p> }.into_any(),
            Some((a, md)) => view! {
                {evidence_view(&a, links.as_ref())}
                {a.error.clone().map(|e| view! { <p class="error">{format!("Failed run: {e}")}</p> })}
                <Markdown tree=md fallback=a.answer.clone().unwrap_or_default() links=links.clone() />
            }.into_any(),
        };
        view! {
            <section class="answer-col" aria-labelledby="answer-h">
                <h2 id="answer-h">{heading}</h2>
                {body}
            </section>
        }
    });
    view! {
        <div class="reading" class:with-answer=reader>
            <section class="checklist-col" aria-labelledby="checklist-h">
                <h2 id="checklist-h">{s.checklist_heading()}</h2>
                <ol class="checklist">
                    {s.question
                        .checklist
                        .iter()
                        .zip(&s.retrieved)
                        .map(|(it, &retrieved)| {
                            let at = Retrieval { read: s.files_read.as_ref(), retrieved };
                            checklist_item(it, &s.runs, reader, at, links.as_ref())
                        })
                        .collect_view()}
                </ol>
            </section>
            {answer}
        </div>
    }
}

/// A checklist item as a reviewer reads it (the Review view): its key point, rubric and
/// evidence files linked at the pinned commit, without any answer or score.
pub(crate) fn plain_item(it: &ChecklistItem, links: Option<&FileLinks>) -> impl IntoView + use<> {
    let at = Retrieval {
        read: None,
        retrieved: None,
    };
    checklist_item(it, &[], false, at, links)
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

/// What the chosen run read, for one item: the paths (`agent.files_read`, normalised) and
/// whether it retrieved the item (see `Shown::retrieved`).
struct Retrieval<'a> {
    read: Option<&'a BTreeSet<String>>,
    retrieved: Option<bool>,
}

/// The item's evidence files, each linked at the pinned commit and, when the chosen run says
/// what it read, marked read or not (in words, not colour alone).
fn evidence_files(
    it: &ChecklistItem,
    read: Option<&BTreeSet<String>>,
    links: Option<&FileLinks>,
) -> impl IntoView + use<> {
    (!it.evidence.is_empty()).then(|| {
        let files = it
            .evidence
            .iter()
            .map(|e| {
                let mark = read.map(|r| {
                    if r.contains(&e.path) {
                        view! { <span class="read-mark read">" read by the agent"</span> }
                            .into_any()
                    } else {
                        view! { <span class="read-mark unread">" not read"</span> }.into_any()
                    }
                });
                view! { <li>{path_link(&e.path, e.lines, links)}{mark}</li> }
            })
            .collect_view();
        view! {
            <div class="item-evidence">
                <span class="label">"Evidence: "</span>
                <ul>{files}</ul>
            </div>
        }
    })
}

/// One checklist item: its key point and rubric, its evidence files, and with a chosen answer
/// each judge run's score chip, the rubric tier reached and the rationale in place (disagreeing
/// runs marked), with whether the run retrieved the item's evidence.
fn checklist_item(
    it: &ChecklistItem,
    runs: &[Judgment],
    reader: bool,
    at: Retrieval<'_>,
    links: Option<&FileLinks>,
) -> impl IntoView + use<> {
    let s = ItemScores::of(it, runs);
    let chips = s
        .distinct
        .iter()
        .rev()
        .map(|&d| chip(d, it.weight, s.runs_giving(d)))
        .collect_view();
    let disagree = s.disagree();
    let several = s.scored.len() > 1;
    let none = s.scored.is_empty();
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
                {chips}
                {disagree.then(|| view! { <span class="disagree">"judge runs disagree"</span> })}
            </p>
            <p class="key-point">{it.key_point.clone()}</p>
            <ul class="rubric" aria-label=format!("Rubric of {}", it.id)>
                {it.rubric
                    .iter()
                    .map(|t| {
                        let hit = s.reached.contains(&t.score);
                        view! {
                            <li class:reached=hit>
                                <b>{t.score}</b> " " {t.criterion.clone()}
                                {hit.then(|| view! { <span class="reached-mark">" ← reached"</span> })}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            {evidence_files(it, at.read.filter(|_| reader), links)}
            {at.retrieved.filter(|_| reader).map(|r| {
                let (class, word) = if r {
                    ("retrieval retrieved", "retrieved: the run read this item's evidence")
                } else {
                    ("retrieval not-retrieved", "not retrieved: the run read none of this item's evidence")
                };
                view! { <p class=class>{word}</p> }
            })}
            {(reader && none).then(|| view! { <p class="empty">"Not judged."</p> })}
            {s.scored
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
