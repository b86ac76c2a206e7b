//! The Review view (`?view=review`, docs/site.md#the-review-view): the human review of a
//! candidates file (`curate verify`'s output, questions with a `curation` block), one candidate
//! at a time — what it is and where it comes from (`candidate.rs`), the four criteria each pass or
//! fail with a note, accept or reject — keyboard first, with progress and filters. Decisions are
//! kept in `localStorage` under the candidates file's SHA-256 ([`store`]) and export as
//! `reviews.jsonl`. With the review files of two or more reviewers loaded beside the candidates,
//! their agreement (the core's `curate::agreement`, as `repoprobe curate agreement`) and the
//! disagreements, each opening the candidate in adjudicator mode (`&adjudicate=1`).

mod candidate;
pub mod store;

use crate::components::help::not_a_shortcut;
use crate::components::report_table::ReportTable;
use crate::state::AppState;
use crate::storage::{keep, stored};
use crate::{href, view_href};
use leptos::ev::keydown;
use leptos::html;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use repoprobe_core::Question;
use repoprobe_core::model::{Review, ReviewCriteria, ReviewDecision, ReviewRole};
use repoprobe_core::sort::SharedSort;
use repoprobe_curate::agreement::agreement;
use store::{Decisions, REVIEWER_KEY, storage_key, whole_seconds};

/// What each criterion asks, in the order of `ReviewCriteria::NAMES` (docs/format.md#review).
const ASKS: [&str; 4] = [
    "the reference answer answers the question",
    "the items are the answer's key points, weighted and scored sensibly",
    "a real code-understanding task that stands on its own",
    "about the repository's code at the pinned commit",
];

/// The filters of `&show=`.
const SHOWS: [(&str, &str); 5] = [
    ("all", "all candidates"),
    ("undecided", "undecided"),
    ("accepted", "accepted"),
    ("rejected", "rejected"),
    ("disagreements", "the reviewers' disagreements"),
];

/// Now, RFC 3339 in UTC, whole seconds.
fn now() -> String {
    whole_seconds(&String::from(js_sys::Date::new_0().to_iso_string()))
}

/// The state of the view, shared by its parts and its keys (all `Copy`).
#[derive(Clone, Copy)]
struct Reviewing {
    decisions: RwSignal<Decisions>,
    /// The storage key the decisions were read from (none until the candidates' hashes came).
    key: RwSignal<Option<String>>,
    reviewer: RwSignal<Option<String>>,
    role: Memo<ReviewRole>,
    current: Memo<Option<String>>,
    status: RwSignal<String>,
    error: RwSignal<Option<String>>,
    note: NodeRef<html::Textarea>,
    name: NodeRef<html::Input>,
}

impl Reviewing {
    /// Applies `f` to the decisions and keeps them (nothing is changed before the key is known:
    /// a decision that could not be kept is not taken).
    fn change(self, f: impl FnOnce(&mut Decisions)) -> bool {
        let Some(k) = self.key.get_untracked() else {
            self.status.set(
                "Reading the candidates file's SHA-256 first (the key decisions are kept under)…"
                    .into(),
            );
            return false;
        };
        self.decisions.update(f);
        match keep(&k, &self.decisions.with_untracked(Decisions::to_json)) {
            Ok(()) => self.error.set(None),
            Err(e) => self.error.set(Some(format!(
                "Your last decision is NOT kept: {e}. Export now to keep it."
            ))),
        }
        true
    }

    fn toggle(self, n: usize) {
        let (Some(id), role) = (self.current.get_untracked(), self.role.get_untracked()) else {
            return;
        };
        if self.change(|d| d.toggle(role, &id, n, &now())) {
            let pass = self
                .decisions
                .with_untracked(|d| d.entry(role, &id).criteria[n]);
            self.status.set(format!(
                "{}: {}",
                ReviewCriteria::NAMES[n],
                if pass { "pass" } else { "fail" }
            ));
        }
    }

    fn note(self, text: String) {
        let (Some(id), role) = (self.current.get_untracked(), self.role.get_untracked()) else {
            return;
        };
        self.change(|d| d.set_note(role, &id, &text, &now()));
    }

    fn decide(self, decision: ReviewDecision) {
        let (Some(id), role) = (self.current.get_untracked(), self.role.get_untracked()) else {
            return;
        };
        let Some(who) = self.reviewer.get_untracked() else {
            self.status
                .set("Give your name first: it goes into every record.".into());
            if let Some(i) = self.name.get_untracked() {
                let _ = i.focus();
            }
            return;
        };
        if self.change(|d| d.decide(role, &id, &who, decision, &now())) {
            let done = match decision {
                ReviewDecision::Accept => "accepted",
                ReviewDecision::Reject => "rejected",
            };
            self.status.set(format!(
                "{id} {done} (as {}); j for the next candidate",
                role.as_str()
            ));
        }
    }

    fn undecide(self) {
        let (Some(id), role) = (self.current.get_untracked(), self.role.get_untracked()) else {
            return;
        };
        if self.change(|d| d.undecide(role, &id)) {
            self.status.set(format!("{id}: decision taken back"));
        }
    }
}

/// Whether candidate `q` passes the filters of the address (`show`, `repo`, `category`).
fn shown(
    q: &Question,
    show: &str,
    repo: Option<&str>,
    category: Option<&str>,
    decision: Option<ReviewDecision>,
    disagreements: &[String],
) -> bool {
    let by_show = match show {
        "undecided" => decision.is_none(),
        "accepted" => decision == Some(ReviewDecision::Accept),
        "rejected" => decision == Some(ReviewDecision::Reject),
        "disagreements" => disagreements.contains(&q.id),
        _ => true,
    };
    by_show && repo.is_none_or(|r| q.repo.name == r) && category.is_none_or(|c| q.category == c)
}

#[component]
pub fn ReviewView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = use_query_map();
    let candidates = candidates_of(state);
    let storage_name = storage_name(state);
    let reviews = Memo::new(move |_| state.snapshot.with(|s| s.reviews.clone()));
    let agreed = Memo::new(move |_| {
        let a = agreement(&reviews.get());
        (a.reviewers.len() >= 2).then_some(a)
    });
    let disagreements =
        Memo::new(move |_| agreed.get().map(|a| a.disagreements).unwrap_or_default());
    let role = Memo::new(move |_| {
        if query.with(|q| q.get("adjudicate").as_deref() == Some("1")) {
            ReviewRole::Adjudicator
        } else {
            ReviewRole::Reviewer
        }
    });
    let decisions = RwSignal::new(Decisions::default());
    let listed = listed(query, role, disagreements, decisions, candidates);
    // The candidate shown: the address's, else the first the filters show. It stays while a
    // decision takes it out of the filter (the next key moves on from it).
    let current = Memo::new(move |_| {
        let id = query.with(|q| q.get("id"));
        match id {
            Some(id) if candidates.with(|c| c.iter().any(|q| q.id == id)) => Some(id),
            _ => listed.with(|l| l.first().cloned()),
        }
    });
    let r = Reviewing {
        decisions,
        key: RwSignal::new(None),
        reviewer: RwSignal::new(stored(REVIEWER_KEY).filter(|n| !n.trim().is_empty())),
        role,
        current,
        status: RwSignal::new(String::new()),
        error: RwSignal::new(None),
        note: NodeRef::new(),
        name: NodeRef::new(),
    };
    keep_decisions(r, storage_name);
    let neighbours = neighbours(current, listed);
    keys(r, neighbours);
    let (go, set_adjudicate) = filter_links();

    view! {
        <h1>"Review"</h1>
        {move || {
            if candidates.with(Vec::is_empty) {
                return no_candidates();
            }
            view! {
                {where_kept(r, storage_name).into_any()}
                {reviewer_form(r).into_any()}
                {filters(candidates, query, go.clone(), set_adjudicate.clone(), role).into_any()}
                {progress(r, candidates, listed).into_any()}
                {move || agreed.get().map(|a| agreement_section(a, r, reviews).into_any())}
                {move || current.get().and_then(|id| candidates.with(|c| c.iter().find(|q| q.id == id).cloned())).map(|q| {
                    // Built again once the kept decisions are read (the note's text is set once).
                    r.key.track();
                    reviewed(r, &q, reviews, neighbours)
                })}
            }
            .into_any()
        }}
    }
}

/// What the filters do: `go(key, value)` shows the candidates with that value (none: all), from
/// the first; `set_adjudicate(on)` switches the adjudicator's mode.
fn filter_links() -> (
    impl Fn(&'static str, String) + Clone + 'static,
    impl Fn(bool) + Clone + 'static,
) {
    let navigate = use_navigate();
    let go = {
        let navigate = navigate.clone();
        move |k: &'static str, v: String| {
            let v = (!v.is_empty()).then_some(v);
            navigate(
                &href(&[(k, v.as_deref()), ("id", None)]),
                Default::default(),
            );
        }
    };
    let set_adjudicate = move |on: bool| {
        navigate(
            &href(&[("adjudicate", on.then_some("1"))]),
            Default::default(),
        )
    };
    (go, set_adjudicate)
}

/// What the view says when no candidate is loaded.
fn no_candidates() -> AnyView {
    view! {
        <p class="empty">
            "No candidates loaded: the Review view reads a candidates file (questions with a "
            <code>"curation"</code>
            " block, as "<code>"repoprobe curate verify"</code>" writes them). Drop it on the page, pick it with “Add results…” or give it as "
            <code>"?data=URL"</code>"; review files dropped beside it show the reviewers' agreement."
        </p>
    }
    .into_any()
}

/// Candidate `q` under review: the pager, the candidate and the decision panel (with the
/// reviews of it loaded).
fn reviewed(
    r: Reviewing,
    q: &Question,
    reviews: Memo<Vec<Review>>,
    neighbours: Memo<(Option<String>, Option<String>)>,
) -> AnyView {
    let others: Vec<Review> = reviews.with(|all| {
        all.iter()
            .filter(|x| x.question_id == q.id)
            .cloned()
            .collect()
    });
    view! {
        {pager(neighbours).into_any()}
        <div class="review-layout">
            {candidate::candidate(q).into_any()}
            {decision_panel(r, &q.id, r.role.get(), others).into_any()}
        </div>
    }
    .into_any()
}

/// The candidates: the questions with a `curation` block, in id order.
fn candidates_of(state: AppState) -> Memo<Vec<Question>> {
    Memo::new(move |_| {
        state.snapshot.with(|s| {
            let mut c: Vec<Question> = s
                .questions
                .iter()
                .filter(|q| q.curation.is_some())
                .cloned()
                .collect();
            c.shared_sort_by(|a, b| a.id.cmp(&b.id));
            c
        })
    })
}

/// The storage key: the SHA-256 of every file that gave questions (the Data view's); `None`
/// until every hash is known.
fn storage_name(state: AppState) -> Memo<Option<String>> {
    Memo::new(move |_| {
        let questions = repoprobe_core::RecordKind::Question.bundle_key();
        let s = state.snapshot.get();
        let hashes = state.hashes.get();
        let mut names = s.files.iter().enumerate().filter(|(i, _)| {
            s.per_file
                .get(*i)
                .is_some_and(|k| k.iter().any(|(k, n)| k == questions && *n > 0))
        });
        let mut any = false;
        let mut got = Vec::new();
        for (_, f) in names.by_ref() {
            any = true;
            got.push(hashes.get(&f.name).cloned()?);
        }
        any.then(|| storage_key(&got))
    })
}

/// The ids the filters show, in id order.
fn listed(
    query: Memo<leptos_router::params::ParamsMap>,
    role: Memo<ReviewRole>,
    disagreements: Memo<Vec<String>>,
    decisions: RwSignal<Decisions>,
    candidates: Memo<Vec<Question>>,
) -> Memo<Vec<String>> {
    Memo::new(move |_| {
        let q = query.get();
        let show = q.get("show").unwrap_or_else(|| "all".into());
        let (repo, category) = (q.get("repo"), q.get("category"));
        let role = role.get();
        let dis = disagreements.get();
        decisions.with(|d| {
            candidates.with(|c| {
                c.iter()
                    .filter(|c| {
                        shown(
                            c,
                            &show,
                            repo.as_deref(),
                            category.as_deref(),
                            d.decision(role, &c.id),
                            &dis,
                        )
                    })
                    .map(|c| c.id.clone())
                    .collect::<Vec<_>>()
            })
        })
    })
}

/// The decisions of this candidates file, read once its key is known; and the browser's
/// warning before the tab closes or reloads with decisions not exported.
fn keep_decisions(r: Reviewing, storage_name: Memo<Option<String>>) {
    let decisions = r.decisions;
    Effect::new(move |_| {
        let Some(k) = storage_name.get() else {
            // Another file of questions came and its hash is not known yet: no decision is
            // taken until it is (it would be kept under the former file's key).
            if r.key.get_untracked().is_some() {
                r.key.set(None);
                decisions.set(Decisions::default());
            }
            return;
        };
        if r.key.get_untracked().as_deref() != Some(k.as_str()) {
            decisions.set(
                stored(&k)
                    .map(|t| Decisions::from_json(&t))
                    .unwrap_or_default(),
            );
            r.key.set(Some(k));
        }
    });
    let unload = window_event_listener_untyped("beforeunload", move |ev| {
        if decisions.with_untracked(|d| d.unexported) {
            ev.prevent_default();
            let _ = js_sys::Reflect::set(&ev, &"returnValue".into(), &"".into());
        }
    });
    on_cleanup(move || unload.remove());
}

/// Previous and next among those the filters show (and the one shown).
fn neighbours(
    current: Memo<Option<String>>,
    listed: Memo<Vec<String>>,
) -> Memo<(Option<String>, Option<String>)> {
    Memo::new(move |_| {
        let cur = current.get();
        let mut ids = listed.get();
        if let Some(c) = &cur
            && !ids.contains(c)
        {
            ids.push(c.clone());
            ids.shared_sort();
        }
        let at = cur.and_then(|c| ids.iter().position(|i| *i == c));
        let prev = at
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| ids.get(i).cloned());
        let next = at.and_then(|i| ids.get(i + 1).cloned());
        (prev, next)
    })
}

/// Where the decisions are kept, and what would lose them.
fn where_kept(r: Reviewing, storage_name: Memo<Option<String>>) -> impl IntoView {
    view! {
        <p class="note review-kept" role="note">
            {move || match storage_name.get() {
                Some(k) => format!(
                    "Your decisions are kept in this browser's local storage (key “{k}”, the candidates file's SHA-256): they survive a reload and a closed tab, but not clearing this site's data or another browser. Export them as reviews.jsonl to keep them for good."
                ),
                None => "Your decisions will be kept in this browser's local storage under the candidates file's SHA-256, being computed…".to_string(),
            }}
        </p>
        {move || r.error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
    }
}

/// The reviewer's name, asked once (kept in local storage for every candidates file).
fn reviewer_form(r: Reviewing) -> impl IntoView {
    move || {
        match r.reviewer.get() {
        Some(name) => view! {
            <p class="reviewer">
                "Reviewing as " <strong class="reviewer-name">{name}</strong> " "
                <button type="button" on:click=move |_| r.reviewer.set(None)>"Change name"</button>
            </p>
        }
        .into_any(),
        None => view! {
            <form class="reviewer-form" on:submit=move |ev| {
                ev.prevent_default();
                let Some(input) = r.name.get_untracked() else { return };
                let name = input.value().trim().to_string();
                if name.is_empty() {
                    return;
                }
                if let Err(e) = keep(REVIEWER_KEY, &name) {
                    r.error.set(Some(format!("Your name is not kept: {e}.")));
                }
                r.reviewer.set(Some(name));
                r.status.set("Name kept. Keys: 1–4 criteria, a accept, r reject, j / k next / previous, ? all keys".into());
            }>
                <label>
                    "Your name, as it goes into every review record: "
                    <input type="text" node_ref=r.name required autocomplete="name" />
                </label>
                " "
                <button type="submit">"Start reviewing"</button>
            </form>
        }
        .into_any(),
    }
    }
}

/// The filters (`&show=`, `&repo=`, `&category=`) and the adjudicator switch (`&adjudicate=1`).
fn filters(
    candidates: Memo<Vec<Question>>,
    query: Memo<leptos_router::params::ParamsMap>,
    go: impl Fn(&'static str, String) + Clone + 'static,
    set_adjudicate: impl Fn(bool) + 'static,
    role: Memo<ReviewRole>,
) -> impl IntoView {
    let values = move |f: fn(&Question) -> &str| {
        let mut v: Vec<String> = candidates.with(|c| c.iter().map(|q| f(q).to_string()).collect());
        v.shared_sort();
        v.dedup();
        v
    };
    let select = move |k: &'static str,
                       label: &'static str,
                       all: &'static str,
                       options: Vec<(String, String)>| {
        let go = go.clone();
        view! {
            <label>
                {label} " "
                <select
                    on:change=move |ev| go(k, event_target_value(&ev))
                    prop:value=move || query.with(|q| q.get(k)).unwrap_or_default()
                >
                    <option value="">{all}</option>
                    {options.into_iter().map(|(v, l)| view! { <option value=v>{l}</option> }).collect_view()}
                </select>
            </label>
        }
    };
    let shows = SHOWS[1..]
        .iter()
        .map(|(v, l)| (v.to_string(), l.to_string()))
        .collect();
    let repos = values(|q| q.repo.name.as_str())
        .into_iter()
        .map(|v| (v.clone(), v))
        .collect();
    let categories = values(|q| q.category.as_str())
        .into_iter()
        .map(|v| (v.clone(), v))
        .collect();
    view! {
        <div class="review-filters" role="group" aria-label="Filters">
            {select("show", "Show", "all candidates", shows)}
            {select("repo", "Repository", "every repository", repos)}
            {select("category", "Category", "every category", categories)}
            <label title="An adjudicator settles the reviewers' disagreements: decisions made with this on are records of role adjudicator">
                <input
                    type="checkbox"
                    prop:checked=move || role.get() == ReviewRole::Adjudicator
                    on:change=move |ev| set_adjudicate(event_target_checked(&ev))
                />
                " Adjudicate (records of role adjudicator)"
            </label>
        </div>
    }
}

/// "37 of 212 reviewed", what the filters show, the export and whether it is due.
fn progress(
    r: Reviewing,
    candidates: Memo<Vec<Question>>,
    listed: Memo<Vec<String>>,
) -> impl IntoView {
    let export = move |_| {
        let text = r.decisions.with_untracked(Decisions::export);
        if text.is_empty() {
            return;
        }
        crate::loading::download("reviews.jsonl", "application/x-ndjson", &text);
        r.change(|d| d.unexported = false);
        r.status.set(format!(
            "Exported {} record(s) as reviews.jsonl",
            text.lines().count()
        ));
    };
    view! {
        <div class="review-progress">
            <p class="progress">
                {move || {
                    let role = r.role.get();
                    let done = r.decisions.with(|d| candidates.with(|c| d.decided(role, c.iter().map(|q| q.id.as_str()))));
                    let total = candidates.with(Vec::len);
                    let what = if role == ReviewRole::Adjudicator { "adjudicated" } else { "reviewed" };
                    let shown = listed.with(Vec::len);
                    let filtered = if shown == total { String::new() } else { format!(" · {shown} shown by the filters") };
                    format!("{done} of {total} {what}{filtered}")
                }}
            </p>
            <button
                type="button"
                class="export-reviews"
                on:click=export
                disabled=move || r.decisions.with(|d| d.records().is_empty())
            >
                "Export reviews.jsonl"
            </button>
            {move || r.decisions.with(|d| d.unexported).then(|| view! {
                <span class="unexported" role="note">" Decisions not exported yet (kept in this browser)"</span>
            })}
            <p class="status" role="status" aria-live="polite">{move || r.status.get()}</p>
        </div>
    }
}

/// Previous and next candidates, as links.
fn pager(neighbours: Memo<(Option<String>, Option<String>)>) -> impl IntoView {
    view! {
        <nav class="pager" aria-label="Candidates">
            {move || {
                let (prev, next) = neighbours.get();
                view! {
                    {prev.map(|p| view! { <a rel="prev" href=href(&[("id", Some(&p))])>{format!("← {p}")}</a> })}
                    {next.map(|n| view! { <a rel="next" href=href(&[("id", Some(&n))])>{format!("{n} →")}</a> })}
                }
            }}
            <span class="hint">"Keys: j / k next / previous, 1–4 criteria, n note, a accept, r reject, u undo, ? all keys"</span>
        </nav>
    }
}

/// The four criteria, the note, accept and reject; in adjudicator mode the reviewers' records.
fn decision_panel(
    r: Reviewing,
    id: &str,
    role: ReviewRole,
    others: Vec<Review>,
) -> impl IntoView + use<> {
    let id = id.to_string();
    let entry = r.decisions.with_untracked(|d| d.entry(role, &id));
    let decided = {
        let id = id.clone();
        move || r.decisions.with(|d| d.decision(role, &id))
    };
    let criteria = ReviewCriteria::NAMES
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let id = id.clone();
            let pass = move || r.decisions.with(|d| d.entry(role, &id).criteria[n]);
            let pass2 = pass.clone();
            view! {
                <li>
                    <label>
                        <input type="checkbox" prop:checked=pass on:change=move |_| r.toggle(n) />
                        " " <kbd>{(n + 1).to_string()}</kbd> " " <code>{*name}</code>
                        <span class="criterion-state">{move || if pass2() { " pass" } else { " fail" }}</span>
                        <span class="muted">{format!(" — {}", ASKS[n])}</span>
                    </label>
                </li>
            }
        })
        .collect_view();
    let adjudicating = role == ReviewRole::Adjudicator;
    view! {
        <section class="decision" aria-labelledby="decision-h">
            <h2 id="decision-h">{if adjudicating { "Your adjudication" } else { "Your review" }}</h2>
            <fieldset>
                <legend>"Criteria (checked: pass)"</legend>
                <ul class="criteria">{criteria}</ul>
            </fieldset>
            <label class="note-label">
                <span><kbd>"n"</kbd> " Note (optional; Escape leaves it)"</span>
                <textarea
                    node_ref=r.note
                    rows="3"
                    prop:value=entry.note
                    on:input=move |ev| r.note(event_target_value(&ev))
                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                        if ev.key() == "Escape"
                            && let Some(t) = r.note.get_untracked()
                        {
                            let _ = t.blur();
                        }
                    }
                ></textarea>
            </label>
            <div class="decide">
                <button type="button" class="accept" on:click=move |_| r.decide(ReviewDecision::Accept)><kbd>"a"</kbd> " Accept"</button>
                <button type="button" class="reject" on:click=move |_| r.decide(ReviewDecision::Reject)><kbd>"r"</kbd> " Reject"</button>
            </div>
            <p class="decided">
                {move || match decided() {
                    Some(ReviewDecision::Accept) => "Decision: accepted",
                    Some(ReviewDecision::Reject) => "Decision: rejected",
                    None => "Decision: none yet",
                }}
            </p>
            {(adjudicating || !others.is_empty()).then(|| reviewers_said(others))}
        </section>
    }
}

/// What the loaded review files say of this candidate (every record, names as text).
fn reviewers_said(others: Vec<Review>) -> impl IntoView {
    if others.is_empty() {
        return view! { <p class="muted">"No loaded review file has a record of this candidate."</p> }.into_any();
    }
    view! {
        // Focusable: a box that scrolls is reached by keyboard too.
        <div class="table-scroll" tabindex="0" role="region" aria-label="The loaded reviews of this candidate">
            <table class="reviewers-said">
                <caption>"The loaded reviews of this candidate"</caption>
                <thead>
                    <tr>
                        <th scope="col">"reviewer"</th>
                        <th scope="col">"role"</th>
                        {ReviewCriteria::NAMES.iter().map(|n| view! { <th scope="col">{*n}</th> }).collect_view()}
                        <th scope="col">"decision"</th>
                        <th scope="col">"note"</th>
                    </tr>
                </thead>
                <tbody>
                    {others.into_iter().map(|o| view! {
                        <tr>
                            <th scope="row">{o.reviewer.clone()}</th>
                            <td>{o.role.as_str()}</td>
                            {o.criteria.values().into_iter().map(|v| view! { <td>{if v { "pass" } else { "fail" }}</td> }).collect_view()}
                            <td>{o.decision.as_str()}</td>
                            <td>{o.note.clone().unwrap_or_default()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// The reviewers' agreement (the core's table, as `repoprobe curate agreement` prints it) and
/// their disagreements, each a link to adjudicate it.
fn agreement_section(
    a: repoprobe_curate::agreement::Agreement,
    r: Reviewing,
    reviews: Memo<Vec<Review>>,
) -> impl IntoView {
    let table = repoprobe_curate::agreement_table(&a);
    view! {
        <section class="agreement" aria-labelledby="agreement-h">
            <h2 id="agreement-h">"The reviewers' agreement"</h2>
            <ReportTable table=table id="agreement" />
            <h3>{format!("Disagreements to adjudicate ({})", a.disagreements.len())}</h3>
            <ul class="disagreements">
                {a.disagreements.into_iter().map(|id| {
                    let link = view_href(crate::View::Review, &[("id", &id), ("adjudicate", "1"), ("show", "disagreements")]);
                    let label = id.clone();
                    // Settled: by an adjudicator's record loaded, or by yours here.
                    let settled = move || {
                        let mine = r.decisions.with(|d| d.decision(ReviewRole::Adjudicator, &id));
                        let loaded = reviews.with(|rs| {
                            rs.iter()
                                .find(|x| x.question_id == id && x.role == ReviewRole::Adjudicator)
                                .map(|x| x.decision)
                        });
                        mine.or(loaded).map(|d| format!(" — adjudicated: {}", d.as_str()))
                    };
                    view! { <li><a href=link>{label}</a><span class="settled">{settled}</span></li> }
                }).collect_view()}
            </ul>
        </section>
    }
}

/// The view's keys: `j`/`k` (or the arrows) next/previous, `1`–`4` a criterion, `n` the note,
/// `a` accept, `r` reject, `u` take the decision back (`?` and Escape: the help dialog's).
fn keys(r: Reviewing, neighbours: Memo<(Option<String>, Option<String>)>) {
    let navigate = use_navigate();
    let handle = window_event_listener(keydown, move |ev: web_sys::KeyboardEvent| {
        // The help dialog is modal: the page's keys wait until it is closed.
        let dialog = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector("[role=dialog]").ok().flatten());
        if not_a_shortcut(&ev) || dialog.is_some() {
            return;
        }
        let key = ev.key();
        match key.as_str() {
            "j" | "ArrowRight" | "k" | "ArrowLeft" => {
                let (prev, next) = neighbours.get_untracked();
                let to = if matches!(key.as_str(), "j" | "ArrowRight") {
                    next
                } else {
                    prev
                };
                if let Some(id) = to {
                    navigate(&href(&[("id", Some(&id))]), Default::default());
                }
            }
            "1" | "2" | "3" | "4" => r.toggle(key.parse::<usize>().unwrap_or(1) - 1),
            "n" => {
                if let Some(t) = r.note.get_untracked() {
                    ev.prevent_default();
                    let _ = t.focus();
                }
            }
            "a" => r.decide(ReviewDecision::Accept),
            "r" => r.decide(ReviewDecision::Reject),
            "u" => r.undecide(),
            _ => {}
        }
    });
    on_cleanup(move || handle.remove());
}
