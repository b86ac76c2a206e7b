//! The switches every table view shares: missing-answer policy, judge and the weights of the
//! checklists' items (clarity's, and knowledge items counting alike; one item's in the question
//! view), the questions the reader dropped (see the Questions view) and the contamination window
//! (`repoprobe score --created-after`), and the standard errors' clusters and the intervals'
//! method (`--cluster`, `--ci`). They live in the URL.
use crate::components::stand_in;
use crate::href;
use crate::options::set_weight;
use crate::state::AppState;
use leptos::prelude::*;
use repoprobe_core::sort::CollectTree;
use std::collections::BTreeSet;

/// The rules these switches set (`repoprobe score --weight`).
const CLARITY: &str = "*/@clarity";
const KNOWLEDGE: &str = "*/@knowledge";
const ALIKE: &str = "*/@knowledge=1";

/// The current URL with the weight rules `rules`.
pub fn weights_href(rules: &[String]) -> String {
    let v = rules.join(",");
    href(&[("w", (!v.is_empty()).then_some(v.as_str()))])
}

#[component]
pub fn Controls() -> impl IntoView {
    let state = expect_context::<AppState>();
    let judges = Memo::new(move |_| {
        state
            .report
            .get()
            .map(|r| r.models.iter().map(|m| m.judge.clone()).collect_set())
            .unwrap_or_default()
    });
    // The four switches: at build time look-alikes (`stand_in`), in the browser controls.
    let (missing, judge, clarity_weight, alike_box) = if stand_in::active() {
        stand_ins(
            state,
            judges,
            judge_in_force(state),
            clarity(state),
            alike(state),
        )
    } else {
        (
            missing_select(state),
            judge_select(state, judges),
            clarity_input(state),
            alike_checkbox(state),
        )
    };
    view! {
        <div class="controls">
            <label>"Missing answers " {missing}</label>
            <label>"Judge " {judge}</label>
            <label title="Every question's clarity item weighs this much against its knowledge items' 9 (the paper: 1)">
                "Clarity weight " {clarity_weight}
            </label>
            <label title="Each knowledge item of a question counts the same, whatever its weight">
                {alike_box} " Knowledge items count alike"
            </label>
            <label title="Only the questions whose discussion was created on or after this date count: those a model trained before it cannot have seen (repoprobe score --created-after)">
                "Created on or after " {created_after_input(state)}
            </label>
            <label title="What the standard errors, intervals and rank ranges treat as independent: whole repositories (their questions move together), single questions, or every cell (repoprobe score --cluster)">
                "Clusters " {cluster_select(state)}
            </label>
            <label title="How the 95% intervals are made: Overall ± 1.96 × the clustered standard error, or a seeded bootstrap over whole clusters (repoprobe score --ci)">
                "Intervals " {ci_select(state)}
            </label>
            {notices(state)}
        </div>
    }
}

/// The weight rules of the URL.
fn rules(state: AppState) -> Vec<String> {
    state.options.get().weights
}

/// The rule for every question's clarity item, or its own weight (1).
fn clarity(state: AppState) -> String {
    rules(state)
        .iter()
        .rev()
        .find_map(|r| {
            r.strip_prefix(CLARITY)
                .and_then(|w| w.strip_prefix('='))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "1".to_string())
}

/// Whether every knowledge item counts alike.
fn alike(state: AppState) -> bool {
    rules(state).iter().any(|r| r == ALIKE)
}

/// The judge of the report shown.
fn judge_in_force(state: AppState) -> String {
    state
        .report
        .get()
        .ok()
        .and_then(|r| r.judge.clone())
        .unwrap_or_default()
}

/// Missing answers count as 0 or are left out.
fn missing_select(state: AppState) -> AnyView {
    let navigate = crate::nav::navigate();
    view! {
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
    }
    .into_any()
}

/// The judge: the one with most judgments, or one named.
fn judge_select(state: AppState, judges: Memo<BTreeSet<String>>) -> AnyView {
    let navigate = crate::nav::navigate();
    view! {
        <select
            on:change=move |ev| {
                let v = event_target_value(&ev);
                navigate(&href(&[("judge", (!v.is_empty()).then_some(v.as_str()))]), Default::default());
            }
            prop:value=move || state.options.get().judge.unwrap_or_default()
        >
            <option value="">{move || format!("most judgments ({})", judge_in_force(state))}</option>
            {move || {
                judges
                    .get()
                    .into_iter()
                    .map(|j| view! { <option value=j.clone()>{j.clone()}</option> })
                    .collect_view()
            }}
        </select>
    }
    .into_any()
}

/// The weight of every question's clarity item.
fn clarity_input(state: AppState) -> AnyView {
    let navigate = crate::nav::navigate();
    view! {
        <input
            type="number"
            min="0"
            max=repoprobe_core::WeightRule::MAX.to_string()
            step="1"
            prop:value=move || clarity(state)
            on:change=move |ev| {
                let Ok(w) = event_target_value(&ev).trim().parse::<u32>() else { return };
                let rules = set_weight(&rules(state), CLARITY, (w != 1).then_some(w));
                navigate(&weights_href(&rules), Default::default());
            }
        />
    }
    .into_any()
}

/// Knowledge items count alike.
fn alike_checkbox(state: AppState) -> AnyView {
    let navigate = crate::nav::navigate();
    view! {
        <input
            type="checkbox"
            prop:checked=move || alike(state)
            on:change=move |ev| {
                let on = event_target_checked(&ev);
                let rules = set_weight(&rules(state), KNOWLEDGE, on.then_some(1));
                navigate(&weights_href(&rules), Default::default());
            }
        />
    }
    .into_any()
}

/// Only the questions created on or after a date (a model's training cut-off) count.
fn created_after_input(state: AppState) -> AnyView {
    let created = move || state.options.get().created_after.unwrap_or_default();
    if stand_in::active() {
        return stand_in::number(created()).into_any();
    }
    let navigate = crate::nav::navigate();
    view! {
        <input
            type="date"
            prop:value=created
            on:change=move |ev| {
                let v = event_target_value(&ev);
                let v = v.trim();
                navigate(&href(&[("created_after", (!v.is_empty()).then_some(v))]), Default::default());
            }
        />
    }
    .into_any()
}

/// The switch of the standard errors' clusters (`&cluster=`, the default `repo` not written).
fn cluster_select(state: AppState) -> AnyView {
    let options = [
        ("repo", "by repository"),
        ("question", "by question"),
        ("none", "none (cells independent)"),
    ];
    url_select(
        state,
        "cluster",
        "repo",
        &options,
        Box::new(move || state.options.get().cluster.as_str()),
    )
}

/// The switch of the intervals' method (`&ci=`, the default `clt` not written).
fn ci_select(state: AppState) -> AnyView {
    let options = [("clt", "CLT (± 1.96 SE)"), ("bootstrap", "bootstrap")];
    url_select(
        state,
        "ci",
        "clt",
        &options,
        Box::new(move || state.options.get().ci.as_str()),
    )
}

/// A select kept in the URL's `key` (its default value left out of the URL), or its look-alike
/// at build time.
fn url_select(
    _state: AppState,
    key: &'static str,
    default: &'static str,
    options: &[(&'static str, &'static str)],
    value: Box<dyn Fn() -> &'static str + Send + Sync>,
) -> AnyView {
    if stand_in::active() {
        return stand_in::select(
            options
                .iter()
                .map(|(v, t)| (v.to_string(), t.to_string()))
                .collect(),
            value(),
        )
        .into_any();
    }
    let navigate = crate::nav::navigate();
    let options = options.to_vec();
    view! {
        <select
            on:change=move |ev| {
                let v = event_target_value(&ev);
                navigate(&href(&[(key, (v != default).then_some(v.as_str()))]), Default::default());
            }
            prop:value=move || value().to_string()
        >
            {options
                .into_iter()
                .map(|(v, t)| view! { <option value=v>{t}</option> })
                .collect_view()}
        </select>
    }
    .into_any()
}

/// The look-alikes of the four switches that the build-time prerender shows.
fn stand_ins(
    state: AppState,
    judges: Memo<BTreeSet<String>>,
    in_force: String,
    clarity: String,
    alike: bool,
) -> (AnyView, AnyView, AnyView, AnyView) {
    let o = state.options.get_untracked();
    let mut judge_options = vec![(String::new(), format!("most judgments ({in_force})"))];
    judge_options.extend(judges.get_untracked().into_iter().map(|j| (j.clone(), j)));
    (
        stand_in::select(
            vec![
                ("zero".into(), "count as 0".into()),
                ("exclude".into(), "are left out".into()),
            ],
            o.missing.as_str(),
        )
        .into_any(),
        stand_in::select(judge_options, &o.judge.unwrap_or_default()).into_any(),
        stand_in::number(clarity).into_any(),
        stand_in::checkbox(alike).into_any(),
    )
}

/// What the URL changes from the numbers' defaults (re-weighting, questions dropped), with the
/// way back.
fn notices(state: AppState) -> impl IntoView {
    let rules = move || state.options.get().weights;
    view! {
            {move || {
            let rules = rules();
            (!rules.is_empty()).then(|| view! {
                <p class="dropped" role="status">
                    {format!("Scores RE-WEIGHTED by you, not the checklists' own weights: {}. ", rules.join(", "))}
                    <a href=href(&[("w", None)])>"Use the checklists' own weights"</a>
                </p>
            })
        }}
        {move || {
            // The window's counts come from the report (the core's, as `score` prints them).
            let window = state.report.with(|r| r.as_ref().ok().and_then(|r| r.created_after.clone()));
            window.map(|w| view! {
                <p class="dropped" role="status">
                    {format!("Scored on {} of {} questions, those created on or after {} ({} without a creation date left out). ", w.questions, w.of, w.created_after, w.undated)}
                    <a href=href(&[("created_after", None)])>"Count every question again"</a>
                </p>
            })
        }}
        {move || {
            let drop = state.options.get().drop;
            (!drop.is_empty()).then(|| view! {
                <p class="dropped" role="status">
                    {format!("Computed WITHOUT {} question(s) you dropped: {}. ", drop.len(), drop.join(", "))}
                    <a href=href(&[("drop", None)])>"Count every question again"</a>
                </p>
            })
        }}
    }
}
