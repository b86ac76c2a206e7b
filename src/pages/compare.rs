//! Side by side (`?view=compare&id=Q&a=MODEL[:ATTEMPT]&b=MODEL[:ATTEMPT]`,
//! docs/site.md#side-by-side): two runs of one question in two columns — their turns aligned by
//! number, each read of an evidence path marked and the first read of each highlighted, the
//! paths only one of them read, and under each its checklist scores and the judge's rationales.
//! The worker reads the two runs and lays them out (`worker::compare`); this view shows them.

use crate::protocol::{Ask, Reply};
use crate::protocol::{CompareRead, CompareSide, CompareTurn, Comparison, QuestionData, RunError};
use crate::query::use_answer;
use crate::state::{AppState, Shared};
use crate::view_href;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use repoprobe_core::Question;
use std::sync::Arc;

#[component]
pub fn Compare() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let asked = Memo::new(move |_| {
        query.with(|q| {
            let id = q.get("id")?;
            let a = crate::options::run_param(&q.get("a")?)?;
            let b = crate::options::run_param(&q.get("b")?)?;
            Some((id, a, b))
        })
    });
    Effect::new(move |_| {
        state.snapshot.track();
        if let Some((id, _, _)) = asked.get() {
            crate::requests::request_question(state, &id);
        }
    });
    let compared = use_answer(
        move || asked.get(),
        |(id, a, b)| Ask::Compare {
            id: id.clone(),
            a: a.clone(),
            b: b.clone(),
        },
        |body, _| match body {
            Reply::Compare(c) => Some(Shared(Arc::new(*c))),
            _ => None,
        },
    );
    view! {
        <h1>"Side by side"</h1>
        {move || {
            let Some((id, _, _)) = asked.get() else {
                return view! {
                    <p class="empty">"Name a question and two runs: ?view=compare&id=QUESTION&a=MODEL&b=MODEL (a run's attempt after a colon: MODEL:1). The Runs view and a question's trajectory link here."</p>
                }
                .into_any();
            };
            let Some(question) = state.snapshot.get().question(&id).cloned() else {
                return view! { <p class="empty">{format!("No question with id {id:?} is loaded.")}</p> }.into_any();
            };
            let c = compared.current();
            let data = state.questions.get().get(&id).cloned();
            let judge = state.report.get().ok().and_then(|r| r.judge.clone());
            match c {
                None => view! { <p aria-busy="true">"Reading the two runs…"</p> }.into_any(),
                Some(c) => columns(&question, &c, data.as_deref(), judge.as_deref()).into_any(),
            }
        }}
    }
}

fn columns(
    q: &Question,
    c: &Comparison,
    data: Option<&QuestionData>,
    judge: Option<&str>,
) -> impl IntoView + use<> {
    let back = view_href(crate::View::Question, &[("id", &q.id)]);
    let rows =
        c.a.as_ref()
            .map_or(0, |s| s.turns.len())
            .max(c.b.as_ref().map_or(0, |s| s.turns.len()));
    let turn = |s: &Result<CompareSide, RunError>, i: usize| -> AnyView {
        match s {
            Ok(s) => s.turns.get(i).map_or_else(
                || view! { <td class="none">"—"</td> }.into_any(),
                |t| turn_cell(s, t).into_any(),
            ),
            Err(_) => view! { <td class="none"></td> }.into_any(),
        }
    };
    view! {
        <p>
            <a href=back>{q.id.clone()}</a> " — " {crate::charts::cut(&q.question, 240)}
        </p>
        <p class="legend">
            "Reads of the question's evidence are marked " <span class="read evidence">"evidence"</span>
            ", the first read of each evidence path " <span class="read evidence first">"first read"</span> "."
        </p>
        <table class="compare" id="compare">
            <caption>"Turns side by side, by number"</caption>
            <thead>
                <tr>
                    <th scope="col">"Turn"</th>
                    {side_head(&c.a, data, judge)}
                    {side_head(&c.b, data, judge)}
                </tr>
            </thead>
            <tbody>
                {(0..rows)
                    .map(|i| view! {
                        <tr>
                            <th scope="row">{i + 1}</th>
                            {turn(&c.a, i)}
                            {turn(&c.b, i)}
                        </tr>
                    })
                    .collect_view()}
            </tbody>
        </table>
        <div class="compare-items">
            {checklist(q, &c.a, data, judge)}
            {checklist(q, &c.b, data, judge)}
        </div>
    }
}

fn name(s: &CompareSide) -> String {
    format!("{} · attempt {}", s.key.model, s.key.attempt)
}

/// A column's head: the run, its agent, what it read that the other did not.
fn side_head(
    s: &Result<CompareSide, RunError>,
    _data: Option<&QuestionData>,
    _judge: Option<&str>,
) -> impl IntoView + use<> {
    match s {
        Err(e) => {
            view! { <th scope="col"><span class="error">{e.to_string()}</span></th> }.into_any()
        }
        Ok(s) => {
            let only = if s.only.is_empty() {
                "nothing the other did not".to_string()
            } else {
                s.only.join(", ")
            };
            view! {
                <th scope="col" class="side" data-model=s.key.model.clone()>
                    <div>{name(s)}</div>
                    <div class="muted">{s.agent.clone()} " · " {format!("{} turns, {} files read", s.turns.len(), s.read.len())}</div>
                    <div class="only">"Read only here: " <span class="only-paths">{only}</span></div>
                </th>
            }
            .into_any()
        }
    }
}

fn turn_cell(s: &CompareSide, t: &CompareTurn) -> impl IntoView + use<> {
    let link = view_href(
        crate::View::Question,
        &[
            ("id", &s.key.question_id),
            ("model", &s.key.model),
            ("att", &s.key.attempt.to_string()),
            ("step", &t.step.to_string()),
        ],
    );
    view! {
        <td class="turn">
            <a href=link class="muted">{format!("step {}", t.step)}</a>
            {(!t.text.is_empty()).then(|| view! { <div class="text">{t.text.clone()}</div> })}
            <ul class="calls">
                {t.calls
                    .iter()
                    .map(|c| view! {
                        <li class:failed=c.failed>
                            <code>{c.name.clone()}</code> " " <span class="input">{c.input.clone()}</span>
                            {c.read.iter().map(read).collect_view()}
                        </li>
                    })
                    .collect_view()}
            </ul>
        </td>
    }
}

fn read(r: &CompareRead) -> impl IntoView + use<> {
    let label = match (r.evidence, r.first) {
        (true, true) => "first read of evidence",
        (true, false) => "evidence, read again",
        _ => "read",
    };
    view! {
        " "
        <span class="read" class:evidence=r.evidence class:first=r.evidence && r.first title=label>{r.path.clone()}</span>
    }
}

/// Under a run: each checklist item with the judge's score and rationale (every judge run of the
/// judge in force).
fn checklist(
    q: &Question,
    s: &Result<CompareSide, RunError>,
    data: Option<&QuestionData>,
    judge: Option<&str>,
) -> impl IntoView + use<> {
    let Ok(s) = s else {
        return view! { <section class="side-items"></section> }.into_any();
    };
    let judgments: Vec<_> = data
        .map(|d| {
            d.judgments
                .iter()
                .filter(|j| {
                    j.model == s.key.model
                        && j.attempt == s.key.attempt
                        && Some(j.judge.as_str()) == judge
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    view! {
        <section class="side-items" aria-label=format!("Checklist of {}", name(s))>
            <h2>{format!("Checklist — {}", name(s))}</h2>
            {judgments.is_empty().then(|| view! { <p class="empty">"Not judged by the judge in force."</p> })}
            <ul>
                {q.checklist
                    .iter()
                    .map(|item| {
                        let scored: Vec<String> = judgments
                            .iter()
                            .filter_map(|j| j.items.iter().find(|i| i.id == item.id))
                            .map(|i| format!("{}/{}", i.score, item.weight))
                            .collect();
                        let rationale = judgments
                            .iter()
                            .find_map(|j| j.items.iter().find(|i| i.id == item.id))
                            .map(|i| i.rationale.clone())
                            .unwrap_or_default();
                        view! {
                            <li>
                                <strong>{item.key_point.clone()}</strong> " "
                                <span class="score">{if scored.is_empty() { "—".to_string() } else { scored.join(", ") }}</span>
                                {(!rationale.is_empty()).then(|| view! { <p class="rationale">{rationale}</p> })}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </section>
    }
    .into_any()
}
