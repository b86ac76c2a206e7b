//! One model: its Table 3 row, the checklist items it misses most, its weakest strata, and the
//! distribution of its scores (the low-score tail the paper points out).

use crate::charts::{ChartData, Point};
use crate::components::chart::Chart;
use crate::components::report_table::ReportTable;
use crate::state::AppState;
use crate::view_href;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use repoprobe_core::metrics::ModelScore;
use repoprobe_core::metrics::cluster::Cluster;
use repoprobe_core::metrics::items::ItemRow;
use repoprobe_core::sort::SharedSort;
use repoprobe_core::{ScoreReport, report};

#[component]
pub fn ModelDetail() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    // The rows with this model's attainment per item only.
    let item_rows =
        crate::requests::use_model_items(state, Signal::derive(move || query.get().get("model")));
    view! {
        {move || {
            let r = match state.report.get() {
                Ok(r) => r,
                Err(e) => return view! { <p class="error">{e.to_string()}</p> }.into_any(),
            };
            let judge = r.judge.clone().unwrap_or_default();
            let models: Vec<String> = r.models.iter().filter(|m| m.judge == judge).map(|m| m.model.clone()).collect();
            let Some(model) = query.get().get("model").filter(|m| models.contains(m)) else {
                return view! {
                    <h1>"Models"</h1>
                    <ul class="models">
                        {models.into_iter().map(|m| view! { <li><a href=view_href(crate::View::Model, &[("model", &m)])>{m.clone()}</a></li> }).collect_view()}
                    </ul>
                }
                    .into_any();
            };
            let score = r.models.iter().find(|m| m.model == model && m.judge == judge).cloned();
            let noise = score.clone().map(|m| view! { <Noise m=m cluster=r.policy.cluster /> });
            let row = score.map(summary);
            // This model's retrieval row, when the report has any (docs/metrics.md#retrieval).
            let retrieval = report::retrieval_rows_table(
                &r.retrieval.iter().filter(|x| x.model == model).cloned().collect::<Vec<_>>(),
                r.judge.as_deref(),
            )
            .map(|t| report::in_window(&r, t));
            let hist = histogram(&r, &model, &judge);
            let points = knowledge_and_clarity(&r, &judge);
            let rows = item_rows.get();
            let missed = missed_most(rows.iter().flat_map(|i| i.iter()), &model);
            let weakest = weakest_strata(&r, &model);
            view! {
                <h1>{model.clone()}</h1>
                {row}
                {noise}
                {retrieval.map(|t| view! {
                    <h2>"Retrieval"</h2>
                    <ReportTable table=t id="model-retrieval" />
                })}
                <h2>"Score distribution"</h2>
                <Chart
                    id=format!("histogram-{model}")
                    title=format!("{model}: judgments by total score s (0–10)")
                    width=640
                    height=320
                    data=ChartData::Histogram(hist)
                />
                <h2>"Clarity vs knowledge, all models"</h2>
                <Chart
                    id="clarity-vs-knowledge"
                    title="Knowledge (x) vs Clarity (y), % — judge in force"
                    width=640
                    height=480
                    data=ChartData::Scatter(points)
                />
                <h2>"Weakest strata"</h2>
                <ul>
                    {weakest.into_iter().map(|(axis, s, v)| view! { <li>{format!("{axis}: {s} — {}", report::pct(v))}</li> }).collect_view()}
                </ul>
                <h2>"Items missed most"</h2>
                {missed_table(missed, &model)}
            }
                .into_any()
        }}
    }
}

/// The model's items by its attainment, lowest first (ties by question): (question, item,
/// attainment in percent).
fn missed_most<'a>(
    rows: impl Iterator<Item = &'a ItemRow>,
    model: &str,
) -> Vec<(String, String, f64)> {
    let mut missed: Vec<_> = rows
        .filter_map(|i| {
            i.per_model
                .get(model)
                .map(|a| (i.question_id.clone(), i.item_id.clone(), *a))
        })
        .collect();
    missed.shared_sort_by(|a, b| a.2.total_cmp(&b.2).then_with(|| a.0.cmp(&b.0)));
    missed
}

/// The model's three weakest strata of each axis: (axis, stratum, Overall).
fn weakest_strata(r: &ScoreReport, model: &str) -> Vec<(String, String, Option<f64>)> {
    r.strata
        .iter()
        .flat_map(|(axis, rows)| {
            let mut v: Vec<_> = rows
                .iter()
                .filter_map(|s| {
                    s.per_model
                        .get(model)
                        .map(|c| (axis.to_string(), s.stratum.clone(), c.overall))
                })
                .collect();
            v.shared_sort_by(|a, b| a.2.unwrap_or(0.0).total_cmp(&b.2.unwrap_or(0.0)));
            v.truncate(3);
            v
        })
        .collect()
}

/// The first 30 items missed most, each linked to the question with the model and item.
fn missed_table(missed: Vec<(String, String, f64)>, model: &str) -> impl IntoView + use<> {
    view! {
        <table class="attainment">
            <thead><tr><th scope="col">"Question"</th><th scope="col">"Item"</th><th scope="col" class="num">"Attainment (%)"</th></tr></thead>
            <tbody>
                {missed.into_iter().take(30).map(|(q, it, a)| {
                    let link = view_href(crate::View::Question, &[("id", &q), ("model", model), ("item", &it)]);
                    view! { <tr><td><a href=link>{q.clone()}</a></td><td>{it}</td><td class="num">{report::pct(Some(a))}</td></tr> }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// Where the model's noise comes from (`ModelScore::variance`, docs/metrics.md#variance-components):
/// each component in a plain sentence, and the standard error projected to other numbers of
/// attempts and judge runs (`Variance::projected_se`), labelled as the projection it is.
#[component]
fn Noise(m: ModelScore, cluster: Cluster) -> impl IntoView {
    let (k0, r0) = (m.attempts, m.runs);
    let k = RwSignal::new(k0.max(1));
    let r = RwSignal::new(r0.max(1));
    let v = m.variance;
    let se = m.se;
    let component = |id: &'static str, name: &'static str, x: Option<f64>, what: &'static str| {
        let text = x
            .filter(|x| x.is_finite())
            .map_or("—".to_string(), |x| format!("{x:.2} points²"));
        view! {
            <li>
                <strong>{name}</strong> " "
                <span id=id data-value=x.filter(|x| x.is_finite()).map(|x| x.to_string())>{text}</span>
                {format!(" — {what}")}
            </li>
        }
    };
    let projected = move || {
        se.and_then(|se| v.projected_se(se, k0, r0, k.get(), r.get()))
            .filter(|x| x.is_finite())
    };
    let number = |label: &'static str, name: &'static str, s: RwSignal<usize>| {
        view! {
            <label>
                {label} " "
                <input
                    type="number"
                    name=name
                    min="1"
                    max="100"
                    step="1"
                    prop:value=move || s.get().to_string()
                    on:change=move |ev| {
                        if let Ok(n) = event_target_value(&ev).trim().parse::<usize>() {
                            s.set(n.clamp(1, 100));
                        }
                    }
                />
            </label>
        }
    };
    view! {
        <section class="noise" aria-labelledby="noise-title">
            <h2 id="noise-title">"Where the noise comes from"</h2>
            <p class="hint">
                {format!(
                    "Overall's standard error: {} ({}, over {} cluster(s)), measured with {k0} attempt(s) and {r0} judge run(s) per question. Its variance splits into:",
                    se.filter(|x| x.is_finite()).map_or("—".to_string(), |x| format!("{x:.2} points")),
                    crate::pages::uncertainty::cluster_words(cluster),
                    m.clusters,
                )}
            </p>
            <ul class="variance">
                {component("variance-questions", "Questions:", v.questions, "how much the questions differ from one another in this model's score; only more questions shrink it.")}
                {component("variance-attempts", "Attempts:", v.attempts, "how much another attempt at the same question scores differently; more attempts per question shrink it.")}
                {component("variance-judge-runs", "Judge runs:", v.judge_runs, "how much the judge disagrees with itself grading the same answer again; more judge runs shrink it.")}
            </ul>
            <div class="controls">
                {number("Attempts K", "attempts", k)}
                {number("Judge runs R", "judge-runs", r)}
            </div>
            <p role="status">
                "A projection, not a measurement: with " {move || k.get()} " attempt(s) and " {move || r.get()}
                " judge run(s) per question, Overall's standard error would be about "
                <span id="projected-se" data-value=move || projected().map(|x| x.to_string())>
                    {move || projected().map_or("— (a component it needs is undefined)".to_string(), |x| format!("{x:.2} points"))}
                </span>
                "."
            </p>
        </section>
    }
}

/// The model's row of Table 3 in a sentence.
fn summary(m: ModelScore) -> impl IntoView {
    view! {
        <p class="summary">
            {format!(
                "Overall {}{} · rank {} · Knowledge {} · Clarity {} · Perfect {} · coverage {} · judge {}",
                report::pct(m.overall),
                crate::pages::uncertainty::half_width(m.ci95).map_or(String::new(), |h| format!(" ± {h:.1}")),
                crate::pages::uncertainty::rank_text(m.rank),
                report::pct(m.knowledge), report::pct(m.clarity),
                report::pct(m.perfect), report::pct(m.coverage.map(|c| c * 100.0)), m.judge
            )}
        </p>
    }
}

/// The score histogram: s = 0..10 over the model's judgments by the judge in force, of the
/// questions in force (the report's).
fn histogram(r: &ScoreReport, model: &str, judge: &str) -> Vec<usize> {
    r.histograms
        .iter()
        .flatten()
        .find(|h| h.model == model && h.judge == judge)
        .map(|h| h.counts.clone())
        .unwrap_or_else(|| vec![0; 11])
}

/// Every model of the judge in force as a point (Knowledge, Clarity).
fn knowledge_and_clarity(r: &ScoreReport, judge: &str) -> Vec<Point> {
    r.models
        .iter()
        .filter(|m| m.judge == judge)
        .filter_map(|m| {
            Some(Point {
                label: m.model.clone(),
                x: m.knowledge?,
                y: m.clarity?,
            })
        })
        .collect()
}
