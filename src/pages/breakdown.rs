//! Table 4 by category, theme or language (mean and sample std over models), and a model ×
//! stratum heatmap with the question count of each stratum and a warning where it is small.

use crate::charts::ChartData;
use crate::components::chart::Chart;
use crate::components::report_table::ReportTable;
use crate::href;
use crate::problems::WhyEmpty;
use crate::state::AppState;
use crate::ui::controls::Controls;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use leptos_router::params::ParamsMap;
use repoprobe_core::metrics::score_report::StratumRow;
use repoprobe_core::{RecordKind, Stratum, report};

/// Strata with fewer questions than this get a warning: their means move a lot with one answer.
const SMALL_N: usize = 10;

#[component]
pub fn Breakdown() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let axis = Memo::new(move |_| match query.get().get("axis").as_deref() {
        Some("theme") => Stratum::Theme,
        Some("language") => Stratum::Language,
        _ => Stratum::Category,
    });
    view! {
        <h1>"Breakdown"</h1>
        <Controls />
        {tabs(query, axis)}
        {move || {
            let r = match state.report.get() {
                Ok(r) => r,
                Err(e) => return view! { <p class="error">{e.to_string()}</p> }.into_any(),
            };
            if r.models.is_empty() {
                return view! {
                    <WhyEmpty
                        state=state
                        needs=RecordKind::Judgment
                        fallback="No judgments are loaded yet: drop a results file (JSON or JSONL) on the page."
                    />
                }
                .into_any();
            }
            let a = axis.get();
            let Some(t) = report::strata_table(&r, a) else { return ().into_any() };
            let rows = r.strata.get(a.as_str()).cloned().unwrap_or_default();
            let models: Vec<String> = rows.first().map(|s| s.per_model.keys().cloned().collect()).unwrap_or_default();
            let heat = ChartData::Heatmap {
                rows: models.clone(),
                cols: rows.iter().map(|s| s.stratum.clone()).collect(),
                values: models
                    .iter()
                    .map(|m| rows.iter().map(|s| s.per_model.get(m).and_then(|c| c.overall)).collect())
                    .collect(),
                counts: rows.iter().map(|s| s.questions).collect(),
            };
            let heat_height = 150 + 40 * models.len() as u32;
            view! {
                <ReportTable table=t id=format!("table4-{}", a.as_str()) />
                <h2>"Heatmap: Overall per model and stratum"</h2>
                <Chart
                    id=format!("heatmap-{}", a.as_str())
                    title=format!("Overall (%) per model and {}", a.as_str())
                    width=900
                    height=heat_height
                    data=heat
                />
                {heat_table(&rows, models)}
            }
                .into_any()
        }}
    }
}

/// The strata axes as tabs, the one shown marked.
fn tabs(query: Memo<ParamsMap>, axis: Memo<Stratum>) -> impl IntoView {
    view! {
        <nav class="tabs" aria-label="Stratify by">
            {Stratum::ALL
                .iter()
                .map(|&s| {
                    view! {
                        <a
                            href=move || { query.track(); href(&[("axis", Some(s.as_str()))]) }
                            aria-current=move || (axis.get() == s).then_some("page")
                        >
                            {s.as_str()}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
    }
}

/// Table 4 as a heat table: Overall per model (rows) and stratum (columns, with their
/// question counts, small ones warned of).
fn heat_table(rows: &[StratumRow], models: Vec<String>) -> impl IntoView + use<> {
    view! {
        <div class="table-scroll">
            <table class="heatmap">
                <thead>
                    <tr>
                        <th scope="col">"Model"</th>
                        {rows
                            .iter()
                            .map(|s| {
                                let small = s.questions < SMALL_N;
                                view! {
                                    <th scope="col" title=format!("{} questions", s.questions)>
                                        {s.stratum.clone()}
                                        <br />
                                        <small class:warn=small>
                                            {format!("n = {}{}", s.questions, if small { " ⚠ small" } else { "" })}
                                        </small>
                                    </th>
                                }
                            })
                            .collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {models
                        .into_iter()
                        .map(|m| {
                            view! {
                                <tr>
                                    <th scope="row">{m.clone()}</th>
                                    {rows
                                        .iter()
                                        .map(|s| {
                                            let v = s.per_model.get(&m).and_then(|c| c.overall);
                                            let style = v
                                                .map(|v| format!("--heat: {:.3}", v / 100.0))
                                                .unwrap_or_default();
                                            view! { <td class="num heat" style=style>{report::pct(v)}</td> }
                                        })
                                        .collect_view()}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}
