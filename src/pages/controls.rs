//! The switches every table view shares: missing-answer policy and judge, and the questions the
//! reader dropped (see the Questions view). They live in the URL.
use crate::href;
use crate::state::AppState;
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use std::collections::BTreeSet;

#[component]
pub fn Controls() -> impl IntoView {
    let state = expect_context::<AppState>();
    let navigate = use_navigate();
    let nav2 = navigate.clone();
    let judges = Memo::new(move |_| {
        state
            .report
            .get()
            .map(|r| {
                r.models
                    .iter()
                    .map(|m| m.judge.clone())
                    .collect::<BTreeSet<_>>()
            })
            .unwrap_or_default()
    });
    let in_force = move || {
        state
            .report
            .get()
            .ok()
            .and_then(|r| r.judge.clone())
            .unwrap_or_default()
    };
    view! {
        <div class="controls">
            <label>
                "Missing answers "
                <select
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        navigate(&href(&[("missing", (v == "exclude").then_some("exclude"))]), Default::default());
                    }
                    prop:value=move || state.options.get().missing.as_str().to_string()
                >
                    <option value="zero">"count as 0"</option>
                    <option value="exclude">"are left out"</option>
                </select>
            </label>
            <label>
                "Judge "
                <select
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        nav2(&href(&[("judge", (!v.is_empty()).then_some(v.as_str()))]), Default::default());
                    }
                    prop:value=move || state.options.get().judge.unwrap_or_default()
                >
                    <option value="">{move || format!("most judgments ({})", in_force())}</option>
                    {move || {
                        judges
                            .get()
                            .into_iter()
                            .map(|j| view! { <option value=j.clone()>{j.clone()}</option> })
                            .collect_view()
                    }}
                </select>
            </label>
            {move || {
                let drop = state.options.get().drop;
                (!drop.is_empty()).then(|| view! {
                    <p class="dropped" role="status">
                        {format!("Computed WITHOUT {} question(s) you dropped: {}. ", drop.len(), drop.join(", "))}
                        <a href=href(&[("drop", None)])>"Count every question again"</a>
                    </p>
                })
            }}
        </div>
    }
}
