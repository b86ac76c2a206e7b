//! The Grade view (`?view=grade&judge=J&n=5&seed=0`, or `&keys=Q|M|A,…`;
//! docs/site.md#the-grade-view): a person grades checklist items by hand, the judge's verdict
//! hidden — the judge's score and rationale of an item are put on the page only once the person
//! has scored it (the model and the judge are named: this is not blind to them). The
//! worker draws the sample (the core's `grading::sample`) and reads the texts back (the
//! question's data); one item of one answer at a time, keyboard first. Grades are kept in
//! `localStorage` under the files' SHA-256 ([`store`]) and export as the checklist judgments of
//! `human:NAME` (`grades-human-NAME.jsonl`), which the Judges view compares with the judge.

pub mod store;

use crate::components::help::not_a_shortcut;
use crate::components::markdown::Markdown;
use crate::protocol::{Ask, GradeAnswer, GradesOfAnswer, QuestionData, Reply};
use crate::query::use_answer;
use crate::requests::request_question;
use crate::state::{AppState, Shared};
use crate::storage::{keep, stored};
use crate::{href, view_href};
use leptos::ev::keydown;
use leptos::html;
use leptos::prelude::*;
use repoprobe_core::grading::{Grade, Sample, human_judge};
use repoprobe_core::model::ChecklistItem;
use repoprobe_core::sort::CollectTree;
use repoprobe_core::{Judgment, Question, RecordKind};
use std::sync::Arc;
use store::{GRADER_KEY, Graded, Unit, compared, file_name, sample_of, score_keys, storage_key};

/// What the address asks: the judge (`None`: the default), the sample, the keys not read.
type Asked = (Option<String>, Sample, Vec<String>);

/// The state of the view, shared by its parts and its keys (all `Copy`).
#[derive(Clone, Copy)]
struct Grading {
    graded: RwSignal<Graded>,
    /// The storage key the grades were read from (none until the files' hashes came).
    key: RwSignal<Option<String>>,
    grader: RwSignal<Option<String>>,
    units: Memo<Vec<Unit>>,
    /// The unit shown, by its place in `units`.
    at: Memo<Option<usize>>,
    item: Memo<Option<ChecklistItem>>,
    picked: RwSignal<Option<u32>>,
    draft: RwSignal<String>,
    status: RwSignal<String>,
    error: RwSignal<Option<String>>,
    rationale: NodeRef<html::Textarea>,
    name: NodeRef<html::Input>,
}

impl Grading {
    fn unit(self) -> Option<Unit> {
        let at = self.at.get_untracked()?;
        self.units.with_untracked(|u| u.get(at).cloned())
    }

    /// Applies `f` to the grades and keeps them (nothing changes before the key is known).
    fn change(self, f: impl FnOnce(&mut Graded)) -> bool {
        let Some(k) = self.key.get_untracked() else {
            self.status
                .set("Reading the files' SHA-256 first (the key grades are kept under)…".into());
            return false;
        };
        self.graded.update(f);
        match keep(&k, &self.graded.with_untracked(Graded::to_json)) {
            Ok(()) => self.error.set(None),
            Err(e) => self.error.set(Some(format!(
                "Your last grade is NOT kept: {e}. Export now to keep it."
            ))),
        }
        true
    }

    /// The score and the rationale shown set to the item's grade kept, if any.
    fn refresh(self) {
        let g = self.unit().and_then(|u| {
            self.graded
                .with_untracked(|g| g.get(&u.at, &u.item).cloned())
        });
        self.picked.set(g.as_ref().map(|g| g.score));
        self.draft.set(g.map(|g| g.rationale).unwrap_or_default());
    }

    /// The allowed scores of the item shown, in the rubric's order.
    fn scores(self) -> Vec<u32> {
        self.item
            .get_untracked()
            .map(|c| c.rubric.iter().map(|t| t.score).collect())
            .unwrap_or_default()
    }

    /// The score whose key is `key` picked.
    fn pick_key(self, key: char) {
        let scores = self.scores();
        if let Some(i) = score_keys(&scores).iter().position(|k| *k == Some(key)) {
            self.picked.set(Some(scores[i]));
        }
    }

    /// The next (`1`) or previous (`-1`) score of the rubric picked.
    fn step_pick(self, by: isize) {
        let scores = self.scores();
        if scores.is_empty() {
            return;
        }
        let now = self
            .picked
            .get_untracked()
            .and_then(|p| scores.iter().position(|s| *s == p));
        let next = match now {
            None => 0,
            Some(i) => i.saturating_add_signed(by).min(scores.len() - 1),
        };
        self.picked.set(Some(scores[next]));
    }

    /// The score picked and the rationale written recorded as the grade of the item shown.
    fn record(self) {
        let Some(u) = self.unit() else { return };
        if self.grader.get_untracked().is_none() {
            self.status
                .set("Give your name first: it names the judge of your grades.".into());
            if let Some(i) = self.name.get_untracked() {
                let _ = i.focus();
            }
            return;
        }
        let Some(score) = self.picked.get_untracked() else {
            self.status
                .set("Pick a score first (its key, or ↑ / ↓), then Enter.".into());
            return;
        };
        let grade = Grade {
            score,
            rationale: self.draft.get_untracked().trim().to_string(),
        };
        if self.change(|g| g.grade(&u.at, &u.item, grade)) {
            self.status.set(format!(
                "Graded {} {score}; the judge's verdict is shown below. j for the next item",
                u.item
            ));
        }
    }
}

#[component]
pub fn Grade() -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = crate::nav::query_map();
    let asked: Memo<Asked> = Memo::new(move |_| {
        query.with(|q| {
            let (sample, unread) = sample_of(
                q.get("keys").as_deref(),
                q.get("n").as_deref(),
                q.get("seed").as_deref(),
            );
            (q.get("judge").filter(|j| !j.is_empty()), sample, unread)
        })
    });
    // Ask the worker whenever the judge, the sample, the options or the data change.
    let drawn = use_answer(
        move || {
            let (judge, sample, _) = asked.get();
            Some((state.options.get(), judge, sample))
        },
        |(options, judge, sample)| Ask::Grade {
            options: options.clone(),
            judge: judge.clone(),
            sample: sample.clone(),
        },
        |body, _| match body {
            Reply::Grade(g) => Some(Shared(Arc::new(*g))),
            _ => None,
        },
    );
    let answer = Memo::new(move |_| drawn.current());
    let r = grading(state, query, answer);
    keep_grades(r, storage_name(state));
    let go = mover(r);
    keys(r, go.clone());
    view! {
        <h1>"Grade"</h1>
        <p class="hint">
            "Grade a judge's work by hand, its verdict hidden until you have given yours: one checklist item of one answer at a time; the judge's score and rationale of an item show only once you have scored it. Your grades are checklist judgments by "
            <code>"human:NAME"</code>
            ", kept in this browser and exported as a file; nothing leaves the browser."
        </p>
        {picks(answer, asked)}
        {grader_form(r)}
        {move || r.error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        {move || match answer.get() {
            None => view! { <p class="empty" aria-busy="true">"Drawing the sample…"</p> }.into_any(),
            Some(a) => {
                let go = go.clone();
                view! {
                    {sample_said(&a, asked.get().2)}
                    {progress(state, r, a.clone())}
                    {move || r.at.get().map(|_| unit_view(state, r, a.clone(), go.clone()))}
                }
                .into_any()
            }
        }}
    }
}

/// The view's state, the unit shown read from the address (`&answer=N&item=ID`; else the first
/// not graded when the grades were read).
fn grading(
    state: AppState,
    query: Memo<leptos_router::params::ParamsMap>,
    answer: Memo<Option<Shared<GradeAnswer>>>,
) -> Grading {
    let graded = RwSignal::new(Graded::default());
    let key = RwSignal::new(None::<String>);
    let units = Memo::new(move |_| {
        let drawn = answer
            .get()
            .map(|a| a.drawn.answers.clone())
            .unwrap_or_default();
        state.snapshot.with(|s| store::units(&drawn, &s.questions))
    });
    let at = Memo::new(move |_| {
        key.track();
        let (answer, item) = query.with(|q| (q.get("answer"), q.get("item")));
        let answer = answer.and_then(|a| a.parse::<usize>().ok());
        units.with(|u| {
            let asked = u.iter().position(|x| {
                Some(x.answer + 1) == answer && item.as_deref().is_none_or(|i| i == x.item)
            });
            let first_open = || {
                graded.with_untracked(|g| u.iter().position(|x| g.get(&x.at, &x.item).is_none()))
            };
            asked.or_else(first_open).or((!u.is_empty()).then_some(0))
        })
    });
    let item = Memo::new(move |_| {
        let u = at.get().and_then(|i| units.with(|u| u.get(i).cloned()))?;
        state.snapshot.with(|s| {
            s.questions
                .iter()
                .find(|q| q.id == u.at.question_id)
                .and_then(|q| q.checklist.iter().find(|c| c.id == u.item).cloned())
        })
    });
    let r = Grading {
        graded,
        key,
        grader: RwSignal::new(stored(GRADER_KEY).filter(|n| human_judge(n).is_some())),
        units,
        at,
        item,
        picked: RwSignal::new(None),
        draft: RwSignal::new(String::new()),
        status: RwSignal::new(String::new()),
        error: RwSignal::new(None),
        rationale: NodeRef::new(),
        name: NodeRef::new(),
    };
    // A unit shown: its grade, if any, is what the score and the rationale start from.
    Effect::new(move |_| {
        let _ = at.get();
        key.track();
        r.refresh();
    });
    r
}

/// Moves `by` units on (negative: back) through the address.
fn mover(r: Grading) -> impl Fn(isize) + Clone + 'static {
    let navigate = crate::nav::navigate();
    move |by: isize| {
        let Some(now) = r.at.get_untracked() else {
            return;
        };
        let to = now.checked_add_signed(by);
        if let Some(u) = to.and_then(|i| r.units.with_untracked(|u| u.get(i).cloned())) {
            let answer = (u.answer + 1).to_string();
            navigate(
                &href(&[("answer", Some(&answer)), ("item", Some(&u.item))]),
                Default::default(),
            );
        }
    }
}

/// The storage key: the SHA-256 of every file that gave questions or answers; `None` until
/// every hash is known.
fn storage_name(state: AppState) -> Memo<Option<String>> {
    Memo::new(move |_| {
        let kinds = [
            RecordKind::Question.bundle_key(),
            RecordKind::Answer.bundle_key(),
        ];
        let s = state.snapshot.get();
        let hashes = state.hashes.get();
        let mut got = Vec::new();
        for (i, f) in s.files.iter().enumerate() {
            let gave = s
                .per_file
                .get(i)
                .is_some_and(|k| k.iter().any(|(k, n)| kinds.contains(&k.as_str()) && *n > 0));
            if gave {
                got.push(hashes.get(&f.name).cloned()?);
            }
        }
        (!got.is_empty()).then(|| storage_key(&got))
    })
}

/// The grades of these files, read once their key is known; and the browser's warning before
/// the tab closes or reloads with grades not exported.
fn keep_grades(r: Grading, storage_name: Memo<Option<String>>) {
    Effect::new(move |_| {
        let Some(k) = storage_name.get() else {
            if r.key.get_untracked().is_some() {
                r.key.set(None);
                r.graded.set(Graded::default());
            }
            return;
        };
        if r.key.get_untracked().as_deref() != Some(k.as_str()) {
            r.graded.set(
                stored(&k)
                    .map(|t| Graded::from_json(&t))
                    .unwrap_or_default(),
            );
            r.key.set(Some(k));
        }
    });
    let graded = r.graded;
    let unload = window_event_listener_untyped("beforeunload", move |ev| {
        if graded.with_untracked(|g| g.unexported) {
            ev.prevent_default();
            let _ = js_sys::Reflect::set(&ev, &"returnValue".into(), &"".into());
        }
    });
    on_cleanup(move || unload.remove());
}

/// Asks the worker for grader `judge`'s judgments in the files (the import button), taken into
/// the store when they come.
fn import(state: AppState, r: Grading, judge: String) {
    let ask = Ask::GradesOf {
        options: state.options.get_untracked(),
        judge: judge.clone(),
    };
    crate::query::send(ask, move |id, body| {
        // One reply: nothing more is awaited.
        crate::query::forget(id);
        if let Reply::GradesOf(got) = body {
            take_import(r, &judge, &got);
        }
    });
}

/// Grader `judge`'s grades taken into the store, if the grader is still the one named.
fn take_import(r: Grading, judge: &str, got: &GradesOfAnswer) {
    let Some(grader) = r.grader.try_get_untracked() else {
        // The view is gone.
        return;
    };
    if grader.and_then(|n| human_judge(&n)).as_deref() != Some(judge) {
        return;
    }
    let from = got.grades.iter().cloned().collect_map();
    let mut n = 0;
    if r.change(|g| n = g.take(from)) {
        r.refresh();
        let why = got.texts_error.clone().unwrap_or_default();
        r.status.set(format!(
            "Took {n} item grade(s) of {judge} from the loaded files. {why}"
        ));
    }
}

/// The judge select and the sample's size and seed, kept in the address.
fn picks(answer: Memo<Option<Shared<GradeAnswer>>>, asked: Memo<Asked>) -> impl IntoView {
    let navigate = crate::nav::navigate();
    let set = move |k: &'static str, v: String| {
        let v = (!v.trim().is_empty()).then_some(v);
        navigate(
            &href(&[(k, v.as_deref()), ("answer", None), ("item", None)]),
            Default::default(),
        );
    };
    let (set2, set3) = (set.clone(), set.clone());
    let judges = move || answer.get().map(|a| a.judges.clone()).unwrap_or_default();
    let chosen = move || {
        answer
            .get()
            .and_then(|a| a.chosen.clone())
            .unwrap_or_default()
    };
    let drawn = move || match asked.get().1 {
        Sample::Drawn { per_model, seed } => (per_model.to_string(), seed.to_string(), false),
        Sample::Given(_) => (String::new(), String::new(), true),
    };
    view! {
        <div class="grade-picks" role="group" aria-label="What to grade">
            <label>
                "Judge "
                <select name="judge" on:change=move |ev| set("judge", event_target_value(&ev)) prop:value=chosen>
                    {move || judges().into_iter().map(|(j, n)| {
                        let label = format!("{j} ({n} judgments)");
                        view! { <option value=j>{label}</option> }
                    }).collect_view()}
                </select>
            </label>
            " "
            <label>
                "Answers per model "
                <input type="number" name="n" min="1" prop:value=move || drawn().0 disabled=move || drawn().2 on:change=move |ev| set2("n", event_target_value(&ev)) />
            </label>
            " "
            <label>
                "Seed "
                <input type="number" name="seed" min="0" prop:value=move || drawn().1 disabled=move || drawn().2 on:change=move |ev| set3("seed", event_target_value(&ev)) />
            </label>
        </div>
    }
}

/// The grader's name, asked once (kept in local storage for every dataset).
fn grader_form(r: Grading) -> impl IntoView {
    move || {
        match r.grader.get() {
        Some(name) => view! {
            <p class="grader">
                "Grading as " <strong class="grader-name">{human_judge(&name).unwrap_or_default()}</strong> " "
                <button type="button" on:click=move |_| r.grader.set(None)>"Change name"</button>
            </p>
        }
        .into_any(),
        None => view! {
            <form class="grader-form" on:submit=move |ev| {
                ev.prevent_default();
                let Some(input) = r.name.get_untracked() else { return };
                let name = input.value().trim().to_string();
                if human_judge(&name).is_none() {
                    r.status.set("A name, please (no control characters).".into());
                    return;
                }
                if let Err(e) = keep(GRADER_KEY, &name) {
                    r.error.set(Some(format!("Your name is not kept: {e}.")));
                }
                r.grader.set(Some(name));
                r.status.set("Name kept. Keys: a score's key, r rationale, Enter record, j / k next / previous, ? all keys".into());
            }>
                <label>
                    "Your name (your grades are judgments by human:NAME): "
                    <input type="text" node_ref=r.name required autocomplete="name" />
                </label>
                " "
                <button type="submit">"Start grading"</button>
            </form>
        }
        .into_any(),
    }
    }
}

/// What the sample holds: keys unknown or not read, or why it is empty.
fn sample_said(a: &GradeAnswer, unread: Vec<String>) -> impl IntoView + use<> {
    let unknown: Vec<String> = a.drawn.unknown.iter().map(|k| k.to_param()).collect();
    let judge = a.chosen.clone().unwrap_or_default();
    let empty = a.drawn.answers.is_empty().then(|| {
        let why = if a.judges.is_empty() {
            "No judgments loaded: load a benchmark and a judge's judgments (drop them, “Add results…” or ?data=URL).".to_string()
        } else {
            format!("Judge {judge:?} judged no answer of the loaded questions in judge run 0: nothing to grade.")
        };
        view! { <p class="empty grade-empty">{why}</p> }
    });
    view! {
        {(!unknown.is_empty()).then(|| view! {
            <p class="error grade-unknown">{format!("Not judged by {judge} in run 0 (left out): {}", unknown.join(", "))}</p>
        })}
        {(!unread.is_empty()).then(|| view! {
            <p class="error grade-unread">{format!("Not read as QUESTION|MODEL|ATTEMPT: {}", unread.join(", "))}</p>
        })}
        {empty}
    }
}

/// "item 3 of 4 of answer 2 of 15; 7 graded", the export and import, where grades are kept.
fn progress(state: AppState, r: Grading, a: Shared<GradeAnswer>) -> impl IntoView {
    let judge = a.chosen.clone().unwrap_or_default();
    let answers = a.drawn.answers.len();
    let mine = move || r.grader.get().and_then(|n| human_judge(&n));
    let export = move |_| {
        let Some(name) = r.grader.get_untracked() else {
            r.status
                .set("Give your name first: it names the judge of your grades.".into());
            return;
        };
        let judge = human_judge(&name).unwrap_or_default();
        let (text, n, incomplete) = state
            .snapshot
            .with_untracked(|s| r.graded.with_untracked(|g| g.export(&s.questions, &judge)));
        if n == 0 {
            r.status.set(format!(
                "No answer has every item graded yet ({incomplete} incomplete): nothing to export."
            ));
            return;
        }
        let file = file_name(&name);
        crate::loading::download(&file, "application/x-ndjson", &text);
        r.change(|g| g.unexported = false);
        r.status.set(format!("Exported {n} answer(s) as {file}; {incomplete} answer(s) not completely graded left out."));
    };
    let in_files = {
        let judges = a.judges.clone();
        move || mine().and_then(|m| judges.iter().find(|(j, _)| *j == m).cloned())
    };
    let import = move |_| {
        if let Some(m) = mine() {
            import(state, r, m);
        }
    };
    let compare = {
        let judge = judge.clone();
        move || {
            mine().map(|m| {
                (
                    m.clone(),
                    view_href(crate::View::Judges, &[("a", &judge), ("b", &m)]),
                )
            })
        }
    };
    view! {
        <div class="grade-progress">
            <p class="progress">
                {move || {
                    let graded = r.units.with(|u| r.graded.with(|g| g.graded(u)));
                    let items = r.units.with(Vec::len);
                    match r.at.get().and_then(|i| r.units.with(|u| u.get(i).cloned())) {
                        Some(u) => format!("item {} of {} of answer {} of {answers}; {graded} of {items} items graded", u.n + 1, u.items, u.answer + 1),
                        None => format!("{graded} of {items} items graded"),
                    }
                }}
            </p>
            <button type="button" class="export-grades" on:click=export disabled=move || r.graded.with(|g| g.grades.is_empty())>
                "Export my grades (.jsonl)"
            </button>
            {move || in_files().map(|(j, n)| view! {
                " "
                <button type="button" class="import-grades" on:click=import>
                    {format!("Take the {n} judgment(s) by {j} in the loaded files into my grades")}
                </button>
            })}
            {move || r.graded.with(|g| g.unexported).then(|| view! {
                <span class="unexported" role="note">" Grades not exported yet (kept in this browser)"</span>
            })}
            <p class="status" role="status" aria-live="polite">{move || r.status.get()}</p>
            <p class="note grade-kept">
                {move || match r.key.get() {
                    Some(k) => format!("Your grades are kept in this browser's local storage (key “{k}”, the SHA-256 of the files of questions and answers): they survive a reload, not clearing this site's data or another browser. Only answers with every item graded are exported."),
                    None => "Your grades will be kept in this browser's local storage under the files' SHA-256, being computed…".to_string(),
                }}
            </p>
            {move || compare().map(|(m, link)| view! {
                <p class="note grade-next">
                    "Once exported, load the file beside " {judge.clone()} "'s judgments and open "
                    <a href=link>{format!("the Judges view ({} vs {m})", judge)}</a>
                    " to see how far you agree."
                </p>
            })}
        </div>
    }
}

/// The unit shown: the pager, the question, the reference, the answer, the item with its
/// scores, the rationale, and once graded the judge's verdict.
fn unit_view(
    state: AppState,
    r: Grading,
    a: Shared<GradeAnswer>,
    go: impl Fn(isize) + Clone + 'static,
) -> AnyView {
    let Some(u) = r.unit() else {
        return ().into_any();
    };
    // Texts (answer, rationales) come with the question's data, asked once.
    request_question(state, &u.at.question_id);
    let question = state.snapshot.with_untracked(|s| {
        s.questions
            .iter()
            .find(|q| q.id == u.at.question_id)
            .cloned()
    });
    let Some(q) = question else {
        return ().into_any();
    };
    let data = Memo::new({
        let id = q.id.clone();
        move |_| state.questions.with(|m| m.get(&id).cloned())
    });
    let (back, on) = (go.clone(), go);
    let judge = a.chosen.clone().unwrap_or_default();
    view! {
        <nav class="pager grade-pager" aria-label="Items">
            <button type="button" on:click=move |_| back(-1)><kbd>"k"</kbd> " ← Previous item"</button>
            <button type="button" on:click=move |_| on(1)>"Next item → " <kbd>"j"</kbd></button>
        </nav>
        <div class="grade-layout">
            {texts(&q, &u, data)}
            {item_panel(r, &q, &u)}
        </div>
        {verdict(r, u, judge, data)}
    }
    .into_any()
}

/// The question, the reference answer and the answer graded (text, or Markdown through the
/// site's safe renderer).
fn texts(
    q: &Question,
    u: &Unit,
    data: Memo<Option<Shared<QuestionData>>>,
) -> impl IntoView + use<> {
    let (model, attempt) = (u.at.model.clone(), u.at.attempt);
    let reference = q.reference_answer.clone();
    let answer = move || {
        let d = data.get()?;
        let i = d
            .answers
            .iter()
            .position(|x| x.model == model && x.attempt == attempt);
        Some(match i {
            Some(i) => {
                let text = d.answers[i].answer.clone().unwrap_or_default();
                view! { <Markdown tree=d.answers_md.get(i).cloned() fallback=text links=None /> }.into_any()
            }
            None => view! { <p class="muted">"No answer text loaded (load the answers file beside the judgments)."</p> }.into_any(),
        })
    };
    let reference_md = move || data.get().and_then(|d| d.reference_md.clone());
    view! {
        <section class="grade-texts" aria-labelledby="grade-q">
            <h2 id="grade-q">{format!("{} · {} #{}", q.id, u.at.model, u.at.attempt)}</h2>
            <p class="question-text">{q.question.clone()}</p>
            <h3>"Reference answer"</h3>
            {move || view! { <Markdown tree=reference_md() fallback=reference.clone() links=None /> }}
            <h3>"The answer"</h3>
            <div class="grade-answer">{answer}</div>
        </section>
    }
}

/// The item: its key point, weight and rubric, each allowed score with its key; the rationale;
/// the record button.
fn item_panel(r: Grading, q: &Question, u: &Unit) -> impl IntoView + use<> {
    let Some(c) = q.checklist.iter().find(|c| c.id == u.item).cloned() else {
        return ().into_any();
    };
    let scores: Vec<u32> = c.rubric.iter().map(|t| t.score).collect();
    let keys = score_keys(&scores);
    let options = c
        .rubric
        .iter()
        .zip(keys)
        .map(|(t, k)| {
            let score = t.score;
            let key = match k {
                Some(k) => k.to_string(),
                None => "↑↓".into(),
            };
            view! {
                <li>
                    <label>
                        <input
                            type="radio"
                            name="grade-score"
                            value=score.to_string()
                            prop:checked=move || r.picked.get() == Some(score)
                            on:change=move |_| r.picked.set(Some(score))
                        />
                        " " <kbd>{key}</kbd> " " <strong>{format!("{score}/{}", c.weight)}</strong>
                        <span class="muted">{format!(" — {}", t.criterion)}</span>
                    </label>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="grade-item" aria-labelledby="grade-item-h">
            <h2 id="grade-item-h">{format!("Item {} ({}, weight {})", c.id, c.kind.as_str(), c.weight)}</h2>
            <p class="key-point">{c.key_point.clone()}</p>
            <fieldset>
                <legend>"Your score"</legend>
                <ul class="grade-scores">{options}</ul>
            </fieldset>
            <label class="note-label">
                <span><kbd>"r"</kbd> " Rationale (optional; Escape leaves it)"</span>
                <textarea
                    node_ref=r.rationale
                    rows="3"
                    prop:value=move || r.draft.get()
                    on:input=move |ev| r.draft.set(event_target_value(&ev))
                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                        if ev.key() == "Escape" && let Some(t) = r.rationale.get_untracked() {
                            let _ = t.blur();
                        }
                    }
                ></textarea>
            </label>
            <button type="button" class="record-grade" on:click=move |_| r.record()>"Record grade " <kbd>"Enter"</kbd></button>
        </section>
    }
    .into_any()
}

/// The judge's score and rationale of the item, once (and only once) the grader scored it.
fn verdict(
    r: Grading,
    u: Unit,
    judge: String,
    data: Memo<Option<Shared<QuestionData>>>,
) -> impl IntoView {
    move || {
        let mine = r.graded.with(|g| g.get(&u.at, &u.item).cloned())?;
        let found = data.get().map(|d| {
            d.judgments
                .iter()
                .find(|j: &&Judgment| {
                    j.judge == judge
                        && j.judge_run == 0
                        && j.model == u.at.model
                        && j.attempt == u.at.attempt
                })
                .and_then(|j| j.items.iter().find(|i| i.id == u.item).cloned())
        });
        let body = match found {
            None => view! { <p aria-busy="true">"Reading the judge's verdict…"</p> }.into_any(),
            Some(None) => {
                view! { <p>{format!("{judge} did not score this item in run 0.")}</p> }.into_any()
            }
            Some(Some(i)) => view! {
                <p class="verdict-line">
                    {format!("Yours {}; {judge}: {} — ", mine.score, i.score)}
                    <strong class="verdict-compared">{compared(mine.score, i.score)}</strong>
                </p>
                <p class="verdict-rationale">{i.rationale.clone()}</p>
            }
            .into_any(),
        };
        Some(view! {
            <section class="grade-verdict" aria-labelledby="grade-verdict-h">
                <h2 id="grade-verdict-h">"The judge's verdict"</h2>
                {body}
            </section>
        })
    }
}

/// The view's keys: a score's key (or ↑ / ↓) picks it, `r` the rationale, Enter records,
/// `j`/`k` (or the arrows) next/previous item (`?` and Escape: the help dialog's).
fn keys(r: Grading, go: impl Fn(isize) + 'static) {
    let handle = window_event_listener(keydown, move |ev: web_sys::KeyboardEvent| {
        let dialog = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector("[role=dialog]").ok().flatten());
        if not_a_shortcut(&ev) || dialog.is_some() {
            return;
        }
        let key = ev.key();
        match key.as_str() {
            "j" | "ArrowRight" => go(1),
            "k" | "ArrowLeft" => go(-1),
            "ArrowDown" | "ArrowUp" => {
                ev.prevent_default();
                r.step_pick(if key == "ArrowDown" { 1 } else { -1 });
            }
            "r" => {
                if let Some(t) = r.rationale.get_untracked() {
                    ev.prevent_default();
                    let _ = t.focus();
                }
            }
            "Enter" => {
                // Enter on a button or a link is theirs.
                let tag = ev
                    .target()
                    .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
                    .map(|e| e.tag_name())
                    .unwrap_or_default();
                if !matches!(tag.as_str(), "BUTTON" | "A" | "SUMMARY") {
                    ev.prevent_default();
                    r.record();
                }
            }
            k => {
                if let Some(c) = k
                    .chars()
                    .next()
                    .filter(|c| k.len() == 1 && c.is_ascii_digit())
                {
                    r.pick_key(c);
                }
            }
        }
    });
    on_cleanup(move || handle.remove());
}
