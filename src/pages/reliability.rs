//! Table 5 (checklist vs scalar Overall across judge runs: mean, sample std, range) and the
//! per-item exact agreement of judge runs, least agreed items first.

use crate::components::report_table::ReportTable;
use crate::state::AppState;
use crate::ui::controls::Controls;
use crate::view_href;
use leptos::prelude::*;
use repoprobe_core::metrics::items::pooled_agreement;
use repoprobe_core::report;
use repoprobe_core::sort::SharedSort;

#[component]
pub fn Reliability() -> impl IntoView {
    let state = expect_context::<AppState>();
    let item_rows = crate::requests::use_items(state);
    view! {
        <h1>"Reliability"</h1>
        <Controls />
        {move || {
            let r = match state.report.get() {
                Ok(r) => r,
                Err(e) => return view! { <p class="error">{e.to_string()}</p> }.into_any(),
            };
            let table = report::reliability_table(&r);
            let rows = item_rows.get();
            let waiting = rows.is_none();
            let mut items: Vec<_> = rows
                .map(|i| i.iter().filter(|i| i.agreement.is_some()).cloned().collect())
                .unwrap_or_default();
            items.shared_sort_by(|a, b| a.agreement.unwrap_or(0.0).total_cmp(&b.agreement.unwrap_or(0.0)));
            let (pairs, pooled) = pooled_agreement(&items);
            view! {
                {match table {
                    Some(t) => view! { <ReportTable table=t id="table5" /> }.into_any(),
                    None => view! { <p class="empty">"Reliability needs several judge runs (judge_run 0, 1, …) or scalar judgments."</p> }.into_any(),
                }}
                <h2>"Judge agreement per checklist item"</h2>
                {if waiting {
                    view! { <p class="empty">"Computing the per-item agreement…"</p> }.into_any()
                } else if let Some(pooled) = pooled {
                    view! {
                        <p>
                            {format!(
                                "Over {pairs} pairs of judge runs of the same answer, the same score was given {pooled:.1}% of the time. Least agreed items first:",
                            )}
                        </p>
                        <table class="agreement">
                            <thead>
                                <tr>
                                    <th scope="col">"Question"</th>
                                    <th scope="col">"Item"</th>
                                    <th scope="col" class="num">"Pairs"</th>
                                    <th scope="col" class="num">"Agreement (%)"</th>
                                </tr>
                            </thead>
                            <tbody>
                                {items
                                    .into_iter()
                                    .take(50)
                                    .map(|i| {
                                        let link = view_href(crate::View::Question, &[("id", &i.question_id), ("item", &i.item_id)]);
                                        view! {
                                            <tr>
                                                <td><a href=link>{i.question_id.clone()}</a></td>
                                                <td>{i.item_id.clone()}</td>
                                                <td class="num">{i.agreement_pairs}</td>
                                                <td class="num">{report::pct(i.agreement)}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                        .into_any()
                } else {
                    view! { <p class="empty">"No answer was judged more than once."</p> }.into_any()
                }}
            }
                .into_any()
        }}
    }
}
