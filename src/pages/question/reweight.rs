//! Re-weighting the question's items live: each item's weight in every table, set in the URL.

use super::shown::Shown;
use crate::options::{set_weight, weights_in_force};
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use repoprobe_core::{ChecklistItem, Question, WeightRule};
use wasm_bindgen::JsCast;

/// The folded panel of weights; open when the URL re-weights the question or the reader opened
/// it (`open`: it stays open when the view is built again).
pub fn panel(s: &Shown, rules: &[String], open: RwSignal<bool>) -> impl IntoView + use<> {
    let question = &s.question;
    view! {
        <details
            class="reweight"
            open=s.reweighted || open.get_untracked()
            on:toggle=move |ev| {
                if let Some(d) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                    open.set(d.has_attribute("open"));
                }
            }
        >
            <summary>"Re-weight this question"</summary>
            <p class="hint">"A weight changes this item in every number of every view (the URL keeps it, as `repoprobe score --weight` does); its judged attainment, score / own weight, stays."</p>
            <ul class="weights">
                {question
                    .checklist
                    .iter()
                    .zip(s.in_force.iter().copied())
                    .map(|(it, w)| view! { <li>{format!("{} ", it.id)} {weight_input(rules, question, it, w)} " " <span class="muted">{it.key_point.clone()}</span></li> })
                    .collect_view()}
            </ul>
        </details>
    }
}

/// Live re-weighting of one item: the number is the weight it has in every table now; changing
/// it sets the rule `QUESTION/ITEM=W` of the URL (`repoprobe score --weight`), or removes it when
/// the item is back at the weight it would have without it.
fn weight_input(
    rules: &[String],
    q: &Question,
    it: &ChecklistItem,
    w: u32,
) -> impl IntoView + use<> {
    let target = format!("{}/{}", q.id, it.id);
    let without = set_weight(rules, &target, None);
    let position = q.checklist.iter().position(|c| c.id == it.id).unwrap_or(0);
    let falls_back_to = weights_in_force(&without, q)
        .get(position)
        .copied()
        .unwrap_or(it.weight);
    let navigate = use_navigate();
    let label = format!("Weight of {} in every table", it.id);
    let changed = w != it.weight;
    view! {
        <label class="weight" class:changed=changed title="Weigh this item otherwise in every number (its judged attainment, score / own weight, stays)">
            "weight "
            <input
                type="number"
                min="0"
                max=WeightRule::MAX.to_string()
                step="1"
                aria-label=label
                prop:value=w.to_string()
                on:change=move |ev| {
                    let Ok(new) = event_target_value(&ev).trim().parse::<u32>() else { return };
                    let rules = if new == falls_back_to { without.clone() } else { set_weight(&without, &target, Some(new)) };
                    navigate(&crate::ui::controls::weights_href(&rules), Default::default());
                }
            />
        </label>
    }
}
