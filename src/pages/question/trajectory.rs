//! The chosen answer's trajectory, folded under its own heading: the outline of turns, a search
//! box and a filter by step kind, and the steps in order (model text, reasoning folded, tool
//! calls with their input as JSON text and their output folded, errors marked, tokens and time).
//! The worker holds the run and sends pages of it (`crate::trajectory` merges them); the
//! address holds what to show (`&step=N` opens the section at step N, `&kind=read` filters).
//!
//! Everything here is the agent's output: text nodes only, repository paths linked to the file
//! at the pinned commit through `FileLinks` alone.

use crate::components::markdown::{FileLinks, linked_text, path_link};
use crate::href;
use crate::protocol::{
    Ask, Reply, RunError, ShownCall, ShownStep, StepKind, StepSource, TrajectoryHead, TrajectoryKey,
};
use crate::state::{AppState, Shared};
use crate::trajectory::{TrajectoryView, count_of, kind_asked, step_asked, step_id, turns};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use leptos_router::params::ParamsMap;
use repoprobe_core::sort::CollectTree;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Steps asked for at a time.
const PAGE: usize = 40;
/// Turns the outline lists before "show every turn".
const OUTLINE: usize = 200;

/// A search's answer: the run, the query, the matching steps (or why none could be had).
type Matches = (TrajectoryKey, String, Result<Vec<u64>, RunError>);

/// A page of a trajectory asked for: the run, the first step, the kinds.
type PageAsk = (TrajectoryKey, u64, Vec<StepKind>);

/// What the section keeps across the view's rebuilds (the view is built again on every change
/// of the address): whether it is open, the search typed, and the worker's answers: the steps
/// shown of the one run open (the worker holds the run; pages of it come as they are asked
/// for) and the last search in it.
#[derive(Clone, Copy)]
pub struct Kept {
    pub open: RwSignal<bool>,
    pub query: RwSignal<String>,
    pub whole_outline: RwSignal<bool>,
    shown: RwSignal<Option<Shared<TrajectoryView>>>,
    matches: RwSignal<Option<Matches>>,
    /// The page asked for and not answered yet: the section, built again on every change of
    /// the address, asks for it once.
    awaited: StoredValue<Option<PageAsk>>,
}

impl Kept {
    pub fn new() -> Kept {
        let state = expect_context::<AppState>();
        let kept = Kept {
            open: RwSignal::new(false),
            query: RwSignal::new(String::new()),
            whole_outline: RwSignal::new(false),
            shown: RwSignal::new(None),
            matches: RwSignal::new(None),
            awaited: StoredValue::new(None),
        };
        // The worker may no longer hold the run after a load (a file given again): asked again.
        Effect::new(move |_| {
            state.snapshot.track();
            kept.shown.set(None);
            kept.matches.set(None);
            kept.awaited.set_value(None);
        });
        kept
    }

    /// Asks for a page of run `key`'s trajectory: `count` steps of `kinds` (all when empty)
    /// from step `from` on, with its outline when the page has none yet (`head`); each page
    /// merged into those shown as it comes.
    fn ask_page(self, key: TrajectoryKey, from: u64, kinds: Vec<StepKind>, head: bool) {
        let ask = Some((key.clone(), from, kinds.clone()));
        if self.awaited.with_value(|a| *a == ask) {
            return;
        }
        self.awaited.set_value(ask);
        let ask = Ask::Trajectory {
            key: key.clone(),
            from,
            kinds,
            count: PAGE,
            head,
        };
        crate::query::send(ask, move |id, body| {
            let Reply::Trajectory(page) = body else {
                return;
            };
            // A long run's first page comes from its first bytes, then the page again whole.
            if !page
                .as_ref()
                .is_ok_and(|p| p.head.as_ref().is_some_and(|h| h.partial))
            {
                crate::query::forget(id);
            }
            self.awaited.try_set_value(None);
            self.shown.try_update(|t| {
                let view = crate::trajectory::merge(t.as_deref(), key.clone(), page);
                *t = Some(Shared(Arc::new(view)));
            });
        });
    }

    /// Asks which steps of run `key`'s trajectory hold `query`.
    fn search(self, key: TrajectoryKey, query: String) {
        let ask = Ask::TrajectorySearch {
            key: key.clone(),
            query: query.clone(),
        };
        crate::query::send(ask, move |id, body| {
            crate::query::forget(id);
            if let Reply::TrajectorySearch(steps) = body {
                self.matches
                    .try_set(Some((key.clone(), query.clone(), steps)));
            }
        });
    }
}

/// The trajectory section of run `key`; `evidence`: the question's evidence paths, marked where
/// the agent read them.
pub fn section(
    key: TrajectoryKey,
    links: Option<FileLinks>,
    evidence: BTreeSet<String>,
    kept: Kept,
) -> AnyView {
    let query = use_query_map();
    let asked_step = move || query.with(|q| q.get("step"));
    let kinds = Memo::new(move |_| kind_asked(query.with(|q| q.get("kind")).as_deref()));
    // A deep link opens the section.
    if asked_step().is_some() {
        kept.open.set(true);
    }
    let view_of = {
        let key = key.clone();
        move || {
            kept.shown
                .get()
                .filter(|t| t.key == key)
                .map(|t| (*t.0).clone())
        }
    };
    ask_what_is_missing(key.clone(), view_of.clone(), kinds, query, kept);
    scroll_to_the_step_asked(query, kept);
    let matches = Memo::new({
        let key = key.clone();
        move |_| {
            kept.matches
                .get()
                .filter(|(k, q, _)| *k == key && *q == kept.query.get())
        }
    });
    let summary_of = view_of.clone();
    let body = move || {
        let v = view_of()?;
        Some(
            steps_view(
                v,
                links.clone(),
                &evidence,
                kinds.get(),
                matches.get().and_then(|m| m.2.ok()),
                kept,
            )
            .into_any(),
        )
    };
    view! {
        <section class="trajectory" aria-labelledby="trajectory-h">
            <details id="trajectory" prop:open=move || kept.open.get()
                on:toggle=move |ev| {
                    let open = event_target::<web_sys::HtmlDetailsElement>(&ev).open();
                    if open != kept.open.get_untracked() { kept.open.set(open); }
                }>
                <summary><h2 id="trajectory-h">"Trajectory"</h2>
                    {move || summary_of().and_then(|v| v.head).map(|h| match h.partial {
                        true => format!(" (first {} steps shown, the rest being read; {})", h.steps, h.agent),
                        false => format!(" ({} steps, {})", h.steps, h.agent),
                    })}
                </summary>
                {search(key, kept, matches)}
                {kind_filter(kinds)}
                {body}
            </details>
        </section>
    }
    .into_any()
}

/// Asks for what the address wants and the page lacks: the run (with its outline), another
/// filter, or the page holding the step asked for.
fn ask_what_is_missing(
    key: TrajectoryKey,
    view_of: impl Fn() -> Option<TrajectoryView> + 'static,
    kinds: Memo<Vec<StepKind>>,
    query: Memo<ParamsMap>,
    kept: Kept,
) {
    Effect::new(move |_| {
        if !kept.open.get() {
            return;
        }
        let kinds = kinds.get();
        let view = view_of();
        let step = step_asked(
            query.with(|q| q.get("step")).as_deref(),
            view.as_ref().and_then(|v| v.head.as_ref()),
        );
        if view.as_ref().is_some_and(|v| v.serves(&kinds, step)) {
            return;
        }
        let from = step.unwrap_or(1);
        let head = view.as_ref().is_none_or(|v| v.head.is_none());
        kept.ask_page(key.clone(), from, kinds, head);
    });
}

/// Scrolls to the step asked for once it is shown, and gives it the focus.
fn scroll_to_the_step_asked(query: Memo<ParamsMap>, kept: Kept) {
    Effect::new(move |_| {
        let Some(n) = step_asked(query.with(|q| q.get("step")).as_deref(), None) else {
            return;
        };
        let shown = kept.shown.with(|t| t.as_ref().is_some_and(|t| t.has(n)));
        if shown && kept.open.get() {
            request_animation_frame(move || {
                if let Some(el) = document().get_element_by_id(&step_id(n)) {
                    el.scroll_into_view();
                    if let Ok(el) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el) {
                        let _ = el.focus();
                    }
                }
            });
        }
    });
}

/// The search over the run's steps: the form, the count found and links to the first 100.
fn search(key: TrajectoryKey, kept: Kept, matches: Memo<Option<Matches>>) -> impl IntoView {
    view! {
        <form class="traj-search" role="search" on:submit=move |ev| {
            ev.prevent_default();
            kept.search(key.clone(), kept.query.get_untracked());
        }>
            <label>"Search the steps "
                <input type="search" name="traj-q" prop:value=move || kept.query.get()
                    on:input=move |ev| kept.query.set(event_target_value(&ev)) />
            </label>
            <button type="submit">"Search"</button>
            <span class="traj-count" role="status">{move || matches.get().map(|(_, q, r)| match r {
                Ok(s) => format!("{} step{} hold “{q}”", s.len(), if s.len() == 1 { "" } else { "s" }),
                Err(e) => format!("Could not search: {e}"),
            })}</span>
        </form>
        {move || matches.get().and_then(|m| m.2.ok()).filter(|s| !s.is_empty()).map(|s| {
            let more = s.len().saturating_sub(100);
            view! {
                <ul class="traj-matches" aria-label="Steps found">
                    {s.into_iter().take(100).map(|n| view! {
                        <li><a href=href(&[("step", Some(&n.to_string())), ("kind", None)])>{format!("step {n}")}</a></li>
                    }).collect_view()}
                    {(more > 0).then(|| view! { <li>{format!("and {more} more")}</li> })}
                </ul>
            }
        })}
    }
}

/// The filter of the steps shown by kind (`&kind=`).
fn kind_filter(kinds: Memo<Vec<StepKind>>) -> impl IntoView {
    let navigate = crate::nav::navigate();
    view! {
        <label class="traj-filter">"Show "
            <select on:change=move |ev| {
                let v = event_target_value(&ev);
                navigate(&href(&[("kind", (!v.is_empty()).then_some(v.as_str())), ("step", None)]), Default::default());
            } prop:value=move || kinds.get().first().map(|k| k.as_str()).unwrap_or_default()>
                <option value="">"every step"</option>
                {StepKind::all().map(|k| view! { <option value=k.as_str()>{format!("{} steps", k.label())}</option> }).collect_view()}
            </select>
        </label>
    }
}

/// The outline and the steps of the page's view.
fn steps_view(
    v: TrajectoryView,
    links: Option<FileLinks>,
    evidence: &BTreeSet<String>,
    kinds: Vec<StepKind>,
    found: Option<Vec<u64>>,
    kept: Kept,
) -> impl IntoView + use<> {
    let found: BTreeSet<u64> = found.into_iter().flatten().collect_set();
    let head = v.head.clone();
    let notes = head.as_ref().map(|h| {
        let lines: Vec<String> = h
            .file_notes
            .iter()
            .cloned()
            .chain(
                h.notes
                    .iter()
                    .map(|n| format!("Note of the trajectory: {n}")),
            )
            .chain(h.problems.iter().map(|p| format!("Not as ATIF says: {p}")))
            .collect();
        lines
            .into_iter()
            .map(|l| view! { <p class="traj-note">{l}</p> })
            .collect_view()
    });
    let count = head.as_ref().map(|h| {
        let n = count_of(h, &kinds);
        let what = kinds.first().map_or("", |k| k.label());
        let of = match h.partial {
            true => format!("the first {} (the rest is being read)", h.steps),
            false => h.steps.to_string(),
        };
        view! { <p class="traj-shown" aria-busy=h.partial.then_some("true")>{format!("{n} {what} step{} of {of}", if n == 1 { "" } else { "s" })}</p> }
    });
    let outline = head.map(|h| outline(&h, kept));
    let error = v
        .error
        .clone()
        .map(|e| view! { <p class="error">{format!("The trajectory could not be read: {e}")}</p> });
    let first = v.steps.first().map(|s| s.step).unwrap_or(1);
    let earlier = (first > 1 && v.error.is_none()).then(|| {
        let from = first.saturating_sub(PAGE as u64).max(1);
        page_button(&v, from, "traj-earlier", "Earlier steps", kept)
    });
    let later = v
        .next
        .map(|next| page_button(&v, next, "traj-more", "More steps", kept));
    let steps = v
        .steps
        .into_iter()
        .map(|s| {
            let hit = found.contains(&s.step);
            step_view(s, links.as_ref(), evidence, hit)
        })
        .collect_view();
    view! {
        {notes}
        {count}
        {error}
        <div class="traj-body">
            {outline}
            <div class="traj-steps">
                {earlier}
                <ol class="steps">{steps}</ol>
                {later}
            </div>
        </div>
    }
}

/// The outline of the run's turns, each a link to its first step (the first `OUTLINE`, until
/// the rest are asked for).
fn outline(h: &TrajectoryHead, kept: Kept) -> impl IntoView + use<> {
    let all = kept.whole_outline.get();
    let t = turns(h);
    let more = t.len().saturating_sub(OUTLINE);
    let items = t
        .into_iter()
        .take(if all { usize::MAX } else { OUTLINE })
        .map(|(turn, e)| {
            let marks = e
                .kinds
                .iter()
                .map(|k| k.label())
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <li><a href=href(&[("step", Some(&e.step.to_string())), ("kind", None)])>
                    {format!("Turn {turn} (step {}): ", e.step)}
                </a>{e.title.clone()}<span class="kinds">{format!(" [{marks}]")}</span></li>
            }
        })
        .collect_view();
    view! {
        <nav class="traj-outline" aria-label="Outline of turns">
            <h3>"Turns"</h3>
            <ol>{items}</ol>
            {(more > 0 && !all).then(|| view! {
                <button type="button" on:click=move |_| kept.whole_outline.set(true)>{format!("Show {more} more turns")}</button>
            })}
        </nav>
    }
}

/// A button asking for the page of the view's steps from step `from`.
fn page_button(
    v: &TrajectoryView,
    from: u64,
    class: &'static str,
    label: &'static str,
    kept: Kept,
) -> impl IntoView + use<> {
    let key = v.key.clone();
    let kinds = v.kinds.clone();
    view! { <button type="button" class=class on:click=move |_| {
        kept.ask_page(key.clone(), from, kinds.clone(), false);
    }>{label}</button> }
}

/// One step's card.
fn step_view(
    s: ShownStep,
    links: Option<&FileLinks>,
    evidence: &BTreeSet<String>,
    hit: bool,
) -> impl IntoView + use<> {
    let who = match s.source {
        StepSource::System => "system",
        StepSource::User => "user",
        StepSource::Agent => "agent",
    };
    let mut facts: Vec<String> = vec![who.to_string()];
    facts.extend(
        s.kinds
            .iter()
            .filter(|k| !matches!(k, StepKind::System | StepKind::User))
            .map(|k| k.label().to_string()),
    );
    if let Some(m) = &s.model {
        facts.push(m.clone());
    }
    if let Some([p, c, cached]) = s.tokens {
        let n = |x: Option<u64>| x.map_or("—".to_string(), |v| v.to_string());
        let cached = cached.map(|c| format!(", {c} cached")).unwrap_or_default();
        facts.push(format!("{} in, {} out tokens{cached}", n(p), n(c)));
    }
    if let Some(sec) = s.seconds {
        facts.push(format!("+{sec:.1} s"));
    }
    let error = s.kinds.contains(&StepKind::Error);
    let n = s.step;
    view! {
        <li class="step" class:error=error class:match=hit id=step_id(n) tabindex="-1">
            <p class="step-head">
                <a href=href(&[("step", Some(&n.to_string()))])>{format!("Step {n}")}</a>
                {format!(" · {}", facts.join(" · "))}
                {s.timestamp.clone().map(|t| view! { " · " <time>{t}</time> })}
                {hit.then(|| view! { <span class="match-mark">" · found"</span> })}
            </p>
            {s.error.clone().map(|e| view! { <p class="error">{format!("Error: {e}")}</p> })}
            {(!s.text.trim().is_empty()).then(|| view! { <div class="step-text prose">{linked_text(&s.text, links)}</div> })}
            {s.reasoning.clone().map(|r| folded("Reasoning".to_string(), r, links.cloned()))}
            {s.calls.into_iter().map(|c| call_view(c, links, evidence)).collect_view()}
        </li>
    }
}

/// A folded text (a tool's output, reasoning): its nodes are made when it is first opened, so a
/// page of steps whose outputs are long paints at once.
fn folded(label: String, text: String, links: Option<FileLinks>) -> impl IntoView + use<> {
    let opened = RwSignal::new(false);
    view! {
        <details class="folded" on:toggle=move |ev| {
            if event_target::<web_sys::HtmlDetailsElement>(&ev).open() {
                opened.set(true);
            }
        }>
            <summary>{label}</summary>
            {move || opened.get().then(|| view! { <pre>{linked_text(&text, links.as_ref())}</pre> })}
        </details>
    }
}

/// One tool call: its name and kind, the files it read (linked, evidence marked), its input as
/// JSON text, its output folded.
fn call_view(
    c: ShownCall,
    links: Option<&FileLinks>,
    evidence: &BTreeSet<String>,
) -> impl IntoView + use<> {
    let read = (!c.read.is_empty()).then(|| {
        let files = c
            .read
            .iter()
            .map(|p| {
                let ev = evidence
                    .contains(p)
                    .then(|| view! { <span class="evidence-mark">" (evidence)"</span> });
                view! { <li>{path_link(p, None, links)}{ev}</li> }
            })
            .collect_view();
        view! { <div class="call-read"><span class="label">"Read: "</span><ul>{files}</ul></div> }
    });
    let status = match (c.failed, c.exit_code) {
        (true, Some(code)) => Some(format!(" — failed (exit code {code})")),
        (true, None) => Some(" — failed".to_string()),
        (false, Some(code)) if code != 0 => Some(format!(" — exit code {code}")),
        _ => None,
    };
    let output = c
        .output
        .map(|o| folded(format!("Output ({} bytes)", o.len()), o, links.cloned()));
    view! {
        <div class="call" class:failed=c.failed>
            <p class="call-head"><code>{c.name}</code>{format!(" ({})", c.kind.label())}{status}</p>
            {read}
            {(!c.input.is_empty()).then(|| view! { <pre class="call-input">{linked_text(&c.input, links)}</pre> })}
            {output}
        </div>
    }
}
