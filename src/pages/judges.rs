//! The Judges view (`?view=judges&a=JUDGE&b=JUDGE`, docs/site.md, its views): how far the
//! judges in the loaded files agree on the checklist items both scored — a model against people
//! (`human:NAME`), against another model —, every pair or the one chosen. One table per pair
//! (the core's `pair_table`: the overall κ, α and F1 with their 95 % intervals, its bias and
//! intervals sentences in the note — or that the sample is too small to say) and the items they
//! disagree on most (the core's `disagreements_table`), each linked to its question. The worker
//! computes the report (the core's `metrics::judges`, what `repoprobe judge-agreement` prints).

use crate::components::report_table::ReportTable;
use crate::href;
use crate::protocol::JudgesAnswer;
use crate::protocol::{Ask, Reply};
use crate::query::use_answer;
use crate::state::{AppState, Shared};
use crate::view_href;
use crate::worker::judges::SHOWN;
use leptos::prelude::*;
use leptos_router::params::ParamsMap;
use repoprobe_core::metrics::cluster::Cluster;
use repoprobe_core::metrics::judges::{JudgePair, JudgesReport};
use repoprobe_core::report;
use repoprobe_core::sort::SharedSort;
use std::sync::Arc;

/// Characters of a rationale a disagreement's cell shows (the whole one in its tooltip).
const RATIONALE_CHARS: usize = 200;

/// A judge named in the address (`a` or `b`); empty is none.
fn judge_param(q: &ParamsMap, key: &str) -> Option<String> {
    q.get(key).filter(|v| !v.is_empty())
}

#[component]
pub fn Judges() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = crate::nav::query_map();
    // Ask the worker whenever the pair, the options or the data change.
    let answer = use_answer(
        move || {
            let q = query.get();
            Some((
                state.options.get(),
                judge_param(&q, "a"),
                judge_param(&q, "b"),
            ))
        },
        |(options, a, b)| Ask::Judges {
            options: options.clone(),
            a: a.clone(),
            b: b.clone(),
        },
        |body, _| match body {
            Reply::Judges(j) => Some(Shared(Arc::new(*j))),
            _ => None,
        },
    );
    let last = Signal::derive(move || answer.last().map(|(_, j)| j));
    view! {
        <h1>"Judges"</h1>
        <p class="hint">
            "How far two judges agree on the checklist items both scored in judge run 0: exact share, Cohen's κ, Krippendorff's α (interval) and the full-credit F1 (B the reference), overall, per item kind and per model, and the bias of their Overalls (A − B), with 95 % intervals from a bootstrap that resamples whole repositories (below 30 units, the sample is too small to say). A model against people: load a file of their judgments as judge "
            <code>"human:NAME"</code>
            "."
        </p>
        <JudgePicks last=last />
        {move || match answer.current() {
            None => view! { <p class="empty" aria-busy="true">"Computing the agreement between judges…"</p> }.into_any(),
            Some(j) => view! { <Answer answer=j /> }.into_any(),
        }}
    }
}

/// The two selects, "Judge A" and "Judge B", kept in the address (`&a=`, `&b=`).
#[component]
fn JudgePicks(last: Signal<Option<Shared<JudgesAnswer>>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = crate::nav::query_map();
    let navigate = crate::nav::navigate();
    // Every judge of the files: the last answer's list (it names them all, whichever pair was
    // asked), else the report's.
    let judges = Memo::new(move |_| {
        if let Some(Ok(r)) = last.get().map(|j| j.report.clone()) {
            return r.judges.into_iter().map(|j| j.judge).collect::<Vec<_>>();
        }
        let mut names: Vec<String> = state
            .report
            .get()
            .map(|r| r.models.iter().map(|m| m.judge.clone()).collect())
            .unwrap_or_default();
        names.shared_sort();
        names.dedup();
        names
    });
    let pick = move |key: &'static str| {
        let navigate = navigate.clone();
        view! {
            <label class="judge-pick">
                {format!("Judge {} ", key.to_uppercase())}
                <select
                    name=key
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        navigate(&href(&[(key, (!v.is_empty()).then_some(v.as_str()))]), Default::default());
                    }
                    prop:value=move || query.get().get(key).unwrap_or_default()
                >
                    <option value="">"every judge"</option>
                    {move || {
                        judges
                            .get()
                            .into_iter()
                            .map(|j| view! { <option value=j.clone()>{j.clone()}</option> })
                            .collect_view()
                    }}
                </select>
            </label>
        }
    };
    view! { <p class="judge-picks">{pick("a")} " " {pick("b")}</p> }
}

/// The worker's answer: why there is none, or a section per pair.
#[component]
fn Answer(answer: Shared<JudgesAnswer>) -> impl IntoView {
    let texts_error = answer
        .texts_error
        .clone()
        .map(|e| view! { <p class="error">{e}</p> });
    let body = match &answer.report {
        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
        Ok(r) if r.judges.len() < 2 => {
            view! { <p class="empty judges-none">{fewer_than_two(r)}</p> }.into_any()
        }
        Ok(r) => {
            let hint = format!(
                "{} pair(s) of {} judges; the intervals from {} bootstrap resamples of whole {} (seed {}), repoprobe judge-agreement's defaults.",
                r.pairs.len(),
                r.judges.len(),
                r.bootstrap,
                match r.cluster {
                    Cluster::Repo => "repositories",
                    Cluster::Question => "questions",
                    Cluster::None => "answers",
                },
                r.seed
            );
            let (cluster, bootstrap) = (r.cluster, r.bootstrap);
            view! {
                <p class="hint">{hint}</p>
                {r.pairs
                    .iter()
                    .enumerate()
                    .map(|(n, p)| {
                        view! { <PairSection pair=p.clone() n=n cluster=cluster bootstrap=bootstrap /> }
                            .into_any()
                    })
                    .collect_view()}
            }
            .into_any()
        }
    };
    view! {
        {texts_error}
        {body}
    }
}

/// The sentence of a view with fewer than two judges.
fn fewer_than_two(r: &JudgesReport) -> String {
    let which = match r.judges.first() {
        Some(j) => format!("only judge {:?} judged", j.judge),
        None => "no judge judged".to_string(),
    };
    format!(
        "Agreement needs two judges, and {which} any answer in judge run 0 in the files loaded. Load a second judge's judgments beside them: another model's, or people's as judge human:NAME (e.g. a file of judgments by \"human:ann\")."
    )
}

/// An interval as a data attribute: `lo,hi`, unrounded.
fn ci_attr(ci: Option<[f64; 2]>) -> Option<String> {
    ci.map(|[lo, hi]| format!("{lo},{hi}"))
}

/// One pair: its table of figures (bias and intervals sentences in the note) and its
/// disagreements; the unrounded intervals in data attributes, for parity checks.
#[component]
fn PairSection(pair: JudgePair, n: usize, cluster: Cluster, bootstrap: u32) -> impl IntoView {
    let table = report::pair_table(&pair, cluster, bootstrap);
    let bias = pair.bias_pp.map(|v| v.to_string());
    let small = pair.too_small.then(|| {
        view! {
            <p class="empty judges-too-small">
                {format!(
                    "The sample is too small to say: {} unit(s), fewer than {}, so no interval is shown.",
                    pair.overall.items,
                    repoprobe_core::metrics::judges::MIN_UNITS
                )}
            </p>
        }
    });
    let disagreements = (!pair.disagreements.is_empty())
        .then(|| view! { <Disagreements pair=pair.clone() n=n /> }.into_any());
    view! {
        <section
            class="judge-pair"
            data-a=pair.a.clone()
            data-b=pair.b.clone()
            data-bias-pp=bias
            data-answers=pair.answers.to_string()
            data-clusters=pair.clusters.to_string()
            data-too-small=pair.too_small.to_string()
            data-kappa-ci95=ci_attr(pair.kappa_ci95)
            data-alpha-interval-ci95=ci_attr(pair.alpha_interval_ci95)
            data-f1-full-credit-ci95=ci_attr(pair.f1_full_credit_ci95)
            data-bias-ci95=ci_attr(pair.bias_ci95)
        >
            <h2>{format!("{} vs {}", pair.a, pair.b)}</h2>
            {small}
            {view! { <ReportTable table=table id=format!("judges-pair-{n}") /> }.into_any()}
            {disagreements}
        </section>
    }
    .into_any()
}

/// The first [`SHOWN`] items the pair scored differently, largest gap first, each question
/// linked to its view (where the whole answer is); the rationales as text.
#[component]
fn Disagreements(pair: JudgePair, n: usize) -> impl IntoView {
    let cut = |s: &str| crate::charts::cut(s, RATIONALE_CHARS);
    let rest = "the question's view shows the whole answer and every judgment; \
                `repoprobe judge-agreement --format json` lists every disagreement";
    let table = report::disagreements_table(&pair, SHOWN, &cut, rest);
    let rows = table
        .rows
        .into_iter()
        .zip(&pair.disagreements)
        .map(|(cells, d)| {
            let link = view_href(
                crate::View::Question,
                &[("id", &d.question_id), ("item", &d.item_id)],
            );
            let whole = [d.rationale_a.clone(), d.rationale_b.clone()];
            let cells = cells
                .into_iter()
                .enumerate()
                .skip(1)
                .map(|(i, c)| {
                    let num = table.numeric.get(i).copied().unwrap_or(false);
                    // Columns 5 and 6 are the rationales: the whole text on hover.
                    let title = i.checked_sub(5).and_then(|k| whole.get(k).cloned());
                    view! { <td class:num=num title=title>{c.text}</td> }.into_any()
                })
                .collect_view();
            view! {
                <tr>
                    <th scope="row"><a href=link>{d.question_id.clone()}</a></th>
                    {cells}
                </tr>
            }
            .into_any()
        })
        .collect_view();
    view! {
        <figure class="report-table disagreements" id=format!("judges-disagreements-{n}")>
            <div class="table-scroll">
                <table>
                    <caption>{table.title}</caption>
                    <thead>
                        <tr>
                            {table.headers.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {table.note.map(|note| view! {
                <figcaption><span class="note">{note}</span></figcaption>
            })}
        </figure>
    }
    .into_any()
}
