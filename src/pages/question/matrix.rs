//! The item × model matrix of scores (each cell opens the judge's rationales) and the
//! rationales of the cell chosen.

use super::shown::{Rationale, Shown};
use crate::components::markdown::{FileLinks, linked_text};
use crate::href;
use leptos::prelude::*;
use repoprobe_core::{ChecklistItem, Judgment};

/// Every model's scores of every item by the judge in force.
pub fn matrix(s: &Shown) -> impl IntoView + use<> {
    let items = &s.question.checklist;
    view! {
        <h2>{format!("Scores by judge {}", s.judge)}</h2>
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
                    {s.by_model
                        .iter()
                        .map(|(m, js)| {
                            let totals: Vec<String> = js.iter().map(|j| j.total().to_string()).collect();
                            view! {
                                <tr>
                                    <th scope="row">{m.clone()}</th>
                                    {items.iter().map(|it| cell(m, js, it)).collect_view()}
                                    <td class="num">{totals.join(" / ")}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Model `m`'s scores of item `it` (one per judge run), their rationales as a tooltip.
fn cell(m: &str, js: &[Judgment], it: &ChecklistItem) -> impl IntoView + use<> {
    let found: Vec<_> = js
        .iter()
        .filter_map(|j| j.items.iter().find(|x| x.id == it.id).map(|x| (j, x)))
        .collect();
    let scores: Vec<String> = found.iter().map(|(_, x)| x.score.to_string()).collect();
    let tip: String = found
        .iter()
        .map(|(j, x)| {
            format!(
                "attempt {}, run {}: {} — {}",
                j.attempt,
                j.judge_run,
                x.score,
                // One line per run: the rationale's own line breaks become spaces.
                crate::charts::cut(&x.rationale, 280)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let full = js.iter().all(|j| {
        j.items
            .iter()
            .any(|x| x.id == it.id && x.score == it.weight)
    });
    let link = href(&[("model", Some(m)), ("item", Some(&it.id))]);
    view! {
        <td class="num cell" class:full=full>
            <a href=link title="Keep the judge's rationales below">{scores.join(" / ")}</a>
            {(!tip.is_empty()).then(|| view! { <span class="tip" role="tooltip">{tip}</span> })}
        </td>
    }
}

/// Why the chosen model got its scores on the chosen item.
pub fn rationale(
    chosen: Option<(String, String, Vec<Rationale>)>,
    links: &Option<FileLinks>,
) -> impl IntoView + use<> {
    let links = links.clone();
    chosen.map(|(m, it, rows)| view! {
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
    })
}
