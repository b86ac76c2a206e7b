//! The leaderboard: Table 3 recomputed from the loaded data (with CIs and coverage), the paired
//! comparison of any two models, and Table 3 as the paper reported it with the audit's marks.

use super::controls::Controls;
use crate::charts::{Bar, ChartData};
use crate::components::chart::Chart;
use crate::components::report_table::ReportTable;
use crate::href;
use crate::state::{AppState, request_paired};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use repoprobe_core::report;

#[component]
pub fn Leaderboard() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <h1>"Leaderboard"</h1>
        <Controls />
        {move || match state.report.get() {
            Err(e) => view! { <p class="error">{e}</p> }.into_any(),
            // Not "nothing loaded" while the first files are still on their way.
            Ok(r) if r.models.is_empty() && state.busy.get().is_some_and(|b| b.ends_with('…')) => {
                view! { <p class="empty">"Loading…"</p> }.into_any()
            }
            Ok(r) if r.models.is_empty() => {
                view! {
                    <p class="empty">
                        "No judgments are loaded yet: drop a results file (JSON or JSONL) on the page."
                    </p>
                }
                    .into_any()
            }
            Ok(r) => {
                let judge = r.judge.clone().unwrap_or_default();
                let mut bars: Vec<Bar> = r
                    .models
                    .iter()
                    .filter(|m| m.judge == judge)
                    .map(|m| Bar { label: m.model.clone(), value: m.overall.unwrap_or(0.0), ci: m.ci95 })
                    .collect();
                bars.sort_unstable_by(|a, b| b.value.total_cmp(&a.value));
                let height = 60 + 28 * bars.len() as u32;
                view! {
                    <ReportTable table=report::models_table(&r) id="leaderboard" />
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
        }}
        <Paired />
        {move || {
            let r = state.report.get().ok()?;
            let t = report::reported_table3(&r, &state.snapshot.get().reported)?;
            Some(view! {
                <h2>"As reported"</h2>
                <p class="hint">
                    "The paper's own numbers, as printed; rows the audit flags say why. Never mixed with the recomputed table above."
                </p>
                <ReportTable table=t id="reported-table3" />
            })
        }}
    }
}

/// Paired comparison of two models of the judge in force (`?a=...&b=...`).
#[component]
fn Paired() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let navigate = use_navigate();
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
        m.sort_unstable();
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
    Effect::new(move |_| {
        let q = query.get();
        state.snapshot.track();
        if let (Some(a), Some(b)) = (q.get("a"), q.get("b")) {
            request_paired(state.options.get(), a, b);
        }
    });
    let table = Memo::new(move |_| {
        let q = query.get();
        let (a, b) = (q.get("a")?, q.get("b")?);
        let options = state.options.get();
        let (o, pa, pb, r) = state.paired.get()?;
        if o != options || pa != a || pb != b {
            return None;
        }
        Some(
            r.map(|r| report::paired_table(&r))
                .map_err(|e| e.to_string()),
        )
    });
    view! {
        <section class="paired">
            <h2>"Compare two models"</h2>
            <p class="hint">"Same questions, same judge; bootstrap over questions (B = 1000, seed 0)."</p>
            {pick("a")} " vs " {pick("b")}
            {move || match table.get() {
                None => ().into_any(),
                Some(Err(e)) => view! { <p class="error">{e}</p> }.into_any(),
                Some(Ok(Some(t))) => view! { <ReportTable table=t id="paired" /> }.into_any(),
                Some(Ok(None)) => ().into_any(),
            }}
        </section>
    }
}
