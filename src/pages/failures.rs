//! Table 7: failure-mode shares per model among answers below 60 %, and their average.

use crate::components::report_table::ReportTable;
use crate::state::AppState;
use leptos::prelude::*;
use repoprobe_core::report;

#[component]
pub fn Failures() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <h1>"Failure modes"</h1>
        {move || match state.report.get() {
            Err(e) => view! { <p class="error">{e}</p> }.into_any(),
            Ok(r) => match report::failure_table(&r) {
                Some(t) => view! { <ReportTable table=t id="table7" /> }.into_any(),
                None => view! { <p class="empty">"No failure-mode labels are loaded."</p> }.into_any(),
            },
        }}
    }
}
