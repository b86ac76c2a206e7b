//! Table 7: failure-mode shares per model among answers below 60 %, and their average.

use crate::charts::ChartData;
use crate::components::chart::Chart;
use crate::components::report_table::ReportTable;
use crate::problems::WhyEmpty;
use crate::state::AppState;
use leptos::prelude::*;
use repoprobe_core::{FailureMode, RecordKind, report};

#[component]
pub fn Failures() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <h1>"Failure modes"</h1>
        {move || match state.report.get() {
            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
            Ok(r) => match report::failure_table(&r) {
                Some(t) => {
                    let groups: Vec<String> = r.failure_modes.iter().map(|f| f.model.clone()).collect();
                    let parts: Vec<String> = FailureMode::ALL.iter().map(|m| m.label().to_string()).collect();
                    let shares: Vec<Vec<f64>> = r
                        .failure_modes
                        .iter()
                        .map(|f| FailureMode::ALL.iter().map(|m| f.shares.get(m.as_str()).copied().unwrap_or(0.0)).collect())
                        .collect();
                    let height = 120 + 30 * groups.len() as u32;
                    view! {
                        <ReportTable table=t id="table7" />
                        <Chart
                            id="failure-modes"
                            title="Failure modes per model (% of labels)"
                            width=760
                            height=height
                            data=ChartData::StackedShares { groups, parts, shares }
                        />
                    }
                        .into_any()
                }
                None => view! {
                    <WhyEmpty
                        state=state
                        needs=RecordKind::FailureLabel
                        fallback="No failure-mode labels are loaded."
                    />
                }
                .into_any(),
            },
        }}
    }
}
