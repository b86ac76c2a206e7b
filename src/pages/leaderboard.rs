//! The leaderboard: Table 3 recomputed from the loaded data (with CIs and coverage), the paired
//! comparison of any two models, and Table 3 as the paper reported it with the audit's marks.
//! On the bundled paper set alone (a few case studies, no ranking to make) it leads with the
//! paper's Table 3 as printed, then the case studies.

use crate::charts::{Bar, ChartData};
use crate::components::chart::Chart;
use crate::components::report_table::{ReportTable, RowNotes};
use crate::pages::uncertainty;
use crate::problems::WhyEmpty;
use crate::protocol::{Ask, Reply};
use crate::query::use_answer;
use crate::state::{AppState, Busy, Shared};
use crate::ui::controls::Controls;
use crate::{href, view_href};
use leptos::prelude::*;
use repoprobe_core::metrics::items::mean_over_runs;
use repoprobe_core::sort::SharedSort;
use repoprobe_core::{Judgment, RecordKind, report};
use std::collections::BTreeMap;
use std::sync::Arc;

#[component]
pub fn Leaderboard() -> impl IntoView {
    let state = expect_context::<AppState>();
    // The bundled paper set alone is three case studies, each answered by one model: no ranking.
    // It leads with the paper's own Table 3, then the case studies; the recomputed table, which
    // is the headline for any data with enough questions (the user's files, the demo), is folded
    // away under a title that says what it is.
    let case_studies = Memo::new(move |_| {
        state.bundled_set.get().is_some_and(|s| s.case_studies) && !state.user_files()
    });
    let reported = move || {
        let r = state.report.get().ok()?;
        report::reported_table3(&r, &state.snapshot.get().reported)
    };
    view! {
        <h1>"Leaderboard"</h1>
        {move || {
            if case_studies.get() {
                view! {
                    {move || reported().map(|t| view! {
                        <h2>"Table 3 as printed in the paper"</h2>
                        <p class="hint">
                            "The paper's own numbers, as printed, not recomputed here; rows the audit flags say why. Add your results files (the button above, or drop them on the page) to score them instead."
                        </p>
                        <ReportTable table=t id="reported-table3" />
                    })}
                    <Explore />
                    <CaseStudies />
                    <details class="recomputed">
                        <summary>{move || recomputed_summary(state)}</summary>
                        <Controls />
                        <Recomputed />
                    </details>
                }
                    .into_any()
            } else {
                view! {
                    <Controls />
                    <Recomputed />
                    <Evidence />
                    <Retrieval />
                    <Paired />
                    {move || reported().map(|t| view! {
                        <h2>"As reported"</h2>
                        <p class="hint">
                            "The paper's own numbers, as printed; rows the audit flags say why. Never mixed with the recomputed table above."
                        </p>
                        <ReportTable table=t id="reported-table3" />
                    })}
                }
                    .into_any()
            }
        }}
    }
}

/// Where a first visit goes to see runs, not only tables: the synthetic demo set's Runs view
/// and one of its runs' trajectory (links relative to the page, so they work under any
/// sub-path).
#[component]
fn Explore() -> impl IntoView {
    view! {
        <p class="hint explore" id="explore">
            "What did the agents do? On the synthetic demo set (invented data, labelled so): "
            // Another bundled set: a page load (the worker fetches a set as it starts), not a
            // move of the router's.
            <a href="?set=demo&view=runs" rel="external">"every run in one table"</a>
            ", filtered by verdict, evidence read or edit attempts, and "
            <a href="?set=demo&view=question&id=synth-q-0001&model=synth-model-04&att=0&step=2" rel="external">
                "one run's trajectory"
            </a>
            ", step by step."
        </p>
    }
}

/// What the folded recomputed table of the case studies is.
fn recomputed_summary(state: AppState) -> String {
    let n = state.snapshot.with(|s| s.questions.len());
    format!(
        "Table 3 recomputed over these {n} question(s): not a ranking, each model answered only its own"
    )
}

/// Table 3 recomputed from the data loaded, with its chart.
#[component]
fn Recomputed() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        match state.report.get() {
        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
        // Not "nothing loaded" while the first files are still on their way.
        Ok(r) if r.models.is_empty() && state.busy.with(Busy::is_loading) => {
            view! { <p class="empty">"Loading…"</p> }.into_any()
        }
        // Why, per file of the user's, when they gave no judgment that counts.
        Ok(r) if r.models.is_empty() => view! {
            <WhyEmpty
                state=state
                needs=RecordKind::Judgment
                fallback="No judgments are loaded yet: drop a results file (JSON or JSONL) on the page."
            />
        }
        .into_any(),
        Ok(r) => {
            let judge = r.judge.clone().unwrap_or_default();
            let mut bars: Vec<Bar> = r
                .models
                .iter()
                .filter(|m| m.judge == judge)
                .map(|m| Bar {
                    label: m.model.clone(),
                    value: m.overall.unwrap_or(0.0),
                    ci: m.ci95,
                })
                .collect();
            bars.shared_sort_by(|a, b| b.value.total_cmp(&a.value));
            let height = 60 + 28 * bars.len() as u32;
            let pending = state.intervals_pending.get();
            let table = uncertainty::leaderboard_table(&r, pending);
            let extras = uncertainty::leaderboard_extras(&r, &table);
            let notes = never_answered(&r, &table);
            view! {
                <ReportTable table id="leaderboard" notes extras busy=pending />
                <p class="hint" id=uncertainty::METHOD_ID>{uncertainty::method_sentence(&r)}</p>
                <Chart
                    id="overall-bars"
                    title=format!("Overall per model with 95% CI (judge {judge})")
                    width=760
                    height=height
                    data=ChartData::ScoreBars(bars)
                />
            }
            .into_any()
        }
    }
    }
}

/// The evidence of the runs beside the scores: mean cost, tokens, turns and seconds per answer
/// and the share of runs that edited the repository, over the questions in force (the core's
/// `report_evidence_table`, so an export is what the core computes); nothing when no answer
/// record carries any.
#[component]
fn Evidence() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let t = state.report.with(|r| {
            r.as_ref()
                .ok()
                .and_then(|r| report::report_evidence_table(r))
        })?;
        Some(view! {
            <h2>"Evidence of the runs"</h2>
            <p class="hint">"What an answer cost and whether the agent edited the repository, from the answer records."</p>
            <ReportTable table=t id="evidence" />
        })
    }
}

/// Whether the runs read the questions' evidence, beside the scores (the core's
/// `retrieval_table` over the report's `retrieval` rows, docs/metrics.md#retrieval); nothing
/// when no question has evidence.
#[component]
fn Retrieval() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let t = state
            .report
            .with(|r| r.as_ref().ok().and_then(|r| report::retrieval_table(r)))?;
        Some(view! {
            <h2>"Retrieval"</h2>
            <p class="hint">"How much of the questions' evidence (the files the checklist points at) each model's runs read, and how the judge's verdicts went with it. Runs that do not say what they read are not counted."</p>
            <ReportTable table=t id="retrieval" />
        })
    }
}

/// Under `missing = zero`, the rows of models that never answered some questions (no answer
/// record, no judgment: not failed runs) say so in their coverage cell, e.g. "answered 3 of 27
/// questions; 24 counted as 0" (docs/metrics.md#never-answered-vs-failed).
fn never_answered(r: &repoprobe_core::ScoreReport, t: &report::Table) -> RowNotes {
    let coverage = t.headers.iter().position(|h| h == "Coverage").unwrap_or(6);
    RowNotes {
        column: coverage,
        notes: r
            .models
            .iter()
            .filter_map(|m| {
                let note = m.never_answered_note(r.policy.missing)?;
                Some(((m.model.clone(), m.judge.clone()), note))
            })
            .collect(),
    }
}

/// The case studies: each question with the model that answered it, that answer's score per
/// checklist item (mean over the judge's runs) and a link from each score to the judge's
/// rationales.
#[component]
fn CaseStudies() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <h2>"The case studies"</h2>
        <p class="hint">
            {move || format!(
                "{} question(s) reconstructed from the paper's text, each with the answer of the model the paper discusses, judged item by item. Too few to rank models on; click a score for the judge's rationales.",
                state.snapshot.with(|s| s.questions.len()),
            )}
        </p>
        {move || {
            let judge = state.report.get().ok().and_then(|r| r.judge.clone()).unwrap_or_default();
            let snapshot = state.snapshot.get();
            let data = state.questions.get();
            snapshot
                .questions
                .iter()
                .map(|q| {
                    crate::requests::request_question(state, &q.id);
                    let mut runs: BTreeMap<String, Vec<&Judgment>> = BTreeMap::new();
                    for j in data.get(&q.id).iter().flat_map(|d| d.judgments.iter()).filter(|j| j.judge == judge) {
                        runs.entry(j.model.clone()).or_default().push(j);
                    }
                    let items = q.checklist.clone();
                    let title = repoprobe_core::text::cut(&q.question, 240);
                    view! {
                        <section class="case-study">
                            <h3>
                                <a href=view_href(crate::View::Question, &[("id", &q.id)])>{q.id.clone()}</a>
                                {format!(" — {} · {}", q.category, q.repo.name)}
                            </h3>
                            <p class="prose">{title}</p>
                            <div class="table-scroll">
                                <table class="matrix case">
                                    <caption>{format!("Score per checklist item, mean of judge {judge}'s runs")}</caption>
                                    <thead>
                                        <tr>
                                            <th scope="col">"Model"</th>
                                            {items.iter().map(|it| view! { <th scope="col" class="num">{format!("{} /{}", it.id, it.weight)}</th> }).collect_view()}
                                            <th scope="col" class="num">"Total /10"</th>
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {runs
                                            .iter()
                                            .filter_map(|(m, js)| Some((m, mean_over_runs(js, &items)?)))
                                            .map(|(m, means)| {
                                                view! {
                                                    <tr>
                                                        <th scope="row">{m.clone()}</th>
                                                        {items
                                                            .iter()
                                                            .zip(&means.items)
                                                            .map(|(it, v)| {
                                                                let link = view_href(crate::View::Question, &[("id", &q.id), ("model", m), ("item", &it.id)]);
                                                                view! { <td class="num"><a href=link title="The judge's rationales">{format!("{v:.1}")}</a></td> }
                                                            })
                                                            .collect_view()}
                                                        <td class="num">{format!("{:.1}", means.total)}</td>
                                                    </tr>
                                                }
                                            })
                                            .collect_view()}
                                    </tbody>
                                </table>
                            </div>
                        </section>
                    }
                })
                .collect_view()
        }}
    }
}

/// Paired comparison of two models of the judge in force (`?a=...&b=...`).
#[component]
fn Paired() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = crate::nav::query_map();
    let navigate = crate::nav::navigate();
    let models = Memo::new(move |_| {
        let r = state.report.get().ok();
        let judge = r.as_ref().and_then(|r| r.judge.clone());
        let mut m: Vec<String> = r
            .map(|r| {
                r.models
                    .iter()
                    .filter(|m| Some(&m.judge) == judge.as_ref())
                    .map(|m| m.model.clone())
                    .collect()
            })
            .unwrap_or_default();
        m.shared_sort();
        m
    });
    let pick = move |key: &'static str| {
        let navigate = navigate.clone();
        view! {
            <select
                aria-label=format!("Model {}", key.to_uppercase())
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    navigate(&href(&[(key, (!v.is_empty()).then_some(v.as_str()))]), Default::default());
                }
                prop:value=move || query.get().get(key).unwrap_or_default()
            >
                <option value="">"choose a model"</option>
                {move || models.get().into_iter().map(|m| view! { <option value=m.clone()>{m.clone()}</option> }).collect_view()}
            </select>
        }
    };
    // Ask the worker whenever the pair, the options or the data change; show its answer when it
    // is for what is asked now.
    let paired = use_answer(
        move || {
            let q = query.get();
            Some((state.options.get(), q.get("a")?, q.get("b")?))
        },
        |(options, a, b)| Ask::Paired {
            options: options.clone(),
            a: a.clone(),
            b: b.clone(),
        },
        |body, _| match body {
            Reply::Paired(r) => Some((*r).map(|r| Shared(Arc::new(r)))),
            _ => None,
        },
    );
    let table = Memo::new(move |_| {
        Some(paired.current()?.map(|r| {
            let figures = r.paired.clone().map(|p| (p, uncertainty::method_words(&r)));
            (figures, report::paired_table(&r))
        }))
    });
    // How the comparison is made, as the report in force says (its policy).
    let how = move || {
        state.report.with(|r| {
            r.as_ref().ok().map_or(String::new(), |r| {
                format!(
                    "Same questions, same judge; the difference's standard error {}, its 95% interval by {}.",
                    uncertainty::cluster_words(r.policy.cluster),
                    uncertainty::method_words(r)
                )
            })
        })
    };
    view! {
        <section class="paired">
            <h2>"Compare two models"</h2>
            <p class="hint">{how}</p>
            {pick("a")} " vs " {pick("b")}
            {move || match table.get() {
                None => ().into_any(),
                Some(Err(e)) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                Some(Ok((figures, t))) => view! {
                    {figures.map(|(p, how)| uncertainty::paired_figures(&p, how))}
                    {t.map(|t| view! { <ReportTable table=t id="paired" /> })}
                }
                .into_any(),
            }}
        </section>
    }
}
