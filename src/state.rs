//! The one shared state of the site. The dataset lives in the Web Worker (`bin/repoprobe-worker`),
//! which loads and scores off the main thread; here are the files given, the worker's
//! [`Snapshot`] of what the views list, and the report for the options in the URL. Pages read it
//! with `expect_context::<AppState>()`.

use crate::protocol::{
    BundledSet, FetchFailure, QuestionData, READY, Request, Response, Snapshot, ViewOptions,
};
use js_sys::Array;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use repoprobe_core::metrics::items::ItemRow;
use repoprobe_core::{MissingPolicy, ScoreReport};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

pub use crate::protocol::Origin;

/// One input file. Its handle (a `Blob`) went to the worker, which holds it.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub name: String,
    pub origin: Origin,
    pub size: usize,
}

/// An `Arc` compared by identity, so memos downstream rerun only when the value is new.
#[derive(Debug)]
pub struct Shared<T>(pub Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

type Items = (ViewOptions, Option<String>, Shared<Vec<ItemRow>>);

type Paired = (
    ViewOptions,
    String,
    String,
    Result<Shared<ScoreReport>, String>,
);

#[derive(Clone, Copy)]
pub struct AppState {
    /// Every file given, counted or not (see [`AppState::counted_files`]).
    pub files: RwSignal<Vec<InputFile>>,
    /// The bundled set fetched at start, if any.
    pub bundled_set: RwSignal<Option<BundledSet>>,
    /// Hex SHA-256 of each file by name, filled in after the tables are shown (the Data view).
    pub hashes: RwSignal<BTreeMap<String, String>>,
    /// A message while files are being fetched, read or scored.
    pub busy: RwSignal<Option<String>>,
    /// The `?data=` URLs the worker could not fetch at start, with why.
    pub fetch_failures: RwSignal<Vec<FetchFailure>>,
    /// What the views list, from the worker.
    pub snapshot: RwSignal<Shared<Snapshot>>,
    pub options: Memo<ViewOptions>,
    /// The report for the options in force; an error message if an option cannot be honoured.
    pub report: RwSignal<Result<Shared<ScoreReport>, String>>,
    /// Whether `report`'s 95 % intervals are still being computed: on large data the worker
    /// answers the tables first and the intervals after (`protocol::defer_intervals`).
    pub intervals_pending: RwSignal<bool>,
    /// Judgments and answers of the questions viewed, by id.
    pub questions: RwSignal<BTreeMap<String, Shared<QuestionData>>>,
    /// The last paired comparison asked for.
    pub paired: RwSignal<Option<Paired>>,
    /// Per-item rows (attainment, agreement) for the options and the model (whose attainment
    /// per item they carry) they were asked for.
    pub items: RwSignal<Option<Items>>,
}

impl AppState {
    /// Whether the user gave files of their own (dropped, picked, `?data=`).
    pub fn user_files(&self) -> bool {
        self.files
            .with(|f| f.iter().any(|f| f.origin != Origin::Bundled))
    }

    /// The files the numbers come from: the user's, and the bundled set if kept or alone.
    pub fn counted_files(&self) -> Vec<InputFile> {
        let keep = self.options.get().keep_bundled;
        let user = self.user_files();
        self.files.with(|f| {
            f.iter()
                .filter(|f| crate::protocol::counted(f.origin, keep, user))
                .cloned()
                .collect()
        })
    }
}

/// A request to the worker: its JSON and the files (`Blob`s) that go with it.
type Message = (String, Option<Array>);

thread_local! {
    static WORKER: RefCell<Option<web_sys::Worker>> = const { RefCell::new(None) };
    /// Messages wait here until the worker says it is ready: a worker drops messages that
    /// arrive before its (asynchronously instantiated) wasm has set its handler.
    static PENDING: RefCell<Option<Vec<Message>>> = const { RefCell::new(Some(Vec::new())) };
    /// Questions asked of the worker since the last load (a view that lists several asks again
    /// as each answer arrives; the worker answers each once).
    static ASKED: RefCell<std::collections::BTreeSet<String>> = const { RefCell::new(std::collections::BTreeSet::new()) };
    /// The worker's answers, parsed, waiting to be applied (see [`apply_later`]).
    static INBOX: RefCell<VecDeque<Response>> = const { RefCell::new(VecDeque::new()) };
}

/// The worker's start script (`bin/repoprobe-worker-start.js`); index.html starts it.
const WORKER_URL: &str = "./repoprobe-worker-start.js";

fn post(req: &Request, blobs: Option<Array>) {
    let Ok(text) = serde_json::to_string(req) else {
        return;
    };
    let queued = PENDING.with(|p| match p.borrow_mut().as_mut() {
        Some(queue) => {
            queue.push((text.clone(), blobs.clone()));
            true
        }
        None => false,
    });
    if !queued {
        send(&text, blobs);
    }
}

/// Posts a request; `Blob`s are cloned as handles (the browser shares the data), so nothing is
/// copied or transferred.
fn send(text: &str, blobs: Option<Array>) {
    WORKER.with(|w| {
        if let Some(w) = w.borrow().as_ref() {
            let msg = Array::of2(
                &JsValue::from_str(text),
                &blobs.map(JsValue::from).unwrap_or(JsValue::NULL),
            );
            if let Err(e) = w.post_message(&msg) {
                web_sys::console::error_2(&"posting to the worker failed".into(), &e);
            }
        }
    });
}

/// The worker index.html started before the page's wasm, if it could.
fn started_worker() -> Option<web_sys::Worker> {
    let window: JsValue = web_sys::window()?.into();
    let w = js_sys::Reflect::get(&window, &JsValue::from_str("__rpWorker")).ok()?;
    w.dyn_into::<web_sys::Worker>().ok()
}

/// Starts the worker here if index.html could not; like there, its name is the URL's query,
/// whose data it fetches.
fn start_worker() -> Result<web_sys::Worker, JsValue> {
    let options = web_sys::WorkerOptions::new();
    if let Some(search) = web_sys::window().and_then(|w| w.location().search().ok()) {
        options.set_name(&search);
    }
    web_sys::Worker::new_with_options(WORKER_URL, &options)
}

/// What that worker said before the app listened, in order; emptied.
fn early_messages() -> Vec<String> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let Ok(list) = js_sys::Reflect::get(&window, &JsValue::from_str("__rpEarly")) else {
        return Vec::new();
    };
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("__rpEarly"), &Array::new());
    Array::from(&list)
        .iter()
        .filter_map(|v| v.as_string())
        .collect()
}

/// Adds files: their handles go to the worker (nothing is read on this thread), which adds them
/// to the files it holds and loads and scores them all again, reading them as streams.
pub fn add_files(state: AppState, files: Vec<InputFile>, blobs: Vec<web_sys::Blob>) {
    if files.is_empty() {
        return;
    }
    state.busy.set(Some("Validating and scoring…".into()));
    let names = files.iter().map(|f| f.name.clone()).collect();
    let origins = files.iter().map(|f| f.origin).collect();
    state.files.update(|f| f.extend(files));
    let list = Array::new();
    for b in blobs {
        list.push(&b);
    }
    post(
        &Request::Add {
            names,
            origins,
            options: state.options.get_untracked(),
        },
        Some(list),
    );
}

/// Asks the worker for one question's judgments and answers (once per question and load).
pub fn request_question(state: AppState, id: &str) {
    let asked = ASKED.with(|a| !a.borrow_mut().insert(id.to_string()));
    if !asked && !state.questions.with_untracked(|q| q.contains_key(id)) {
        post(&Request::Question { id: id.to_string() }, None);
    }
}

/// The per-item rows for the options in force, asked of the worker when a view needs them
/// (again after every load or change of options); `None` until they arrive. Without any model's
/// attainment per item (see [`use_model_items`]).
pub fn use_items(state: AppState) -> Memo<Option<Shared<Vec<ItemRow>>>> {
    use_model_items(state, Signal::derive(|| None))
}

/// The per-item rows with `model`'s attainment per item (`ItemRow::per_model` holds that model
/// alone: the rows of every model would be large).
pub fn use_model_items(
    state: AppState,
    model: Signal<Option<String>>,
) -> Memo<Option<Shared<Vec<ItemRow>>>> {
    Effect::new(move |_| {
        state.snapshot.track();
        let options = state.options.get();
        let model = model.get();
        let have = state.items.with_untracked(|i| {
            i.as_ref()
                .is_some_and(|(o, m, _)| *o == options && *m == model)
        });
        if !have {
            post(&Request::Items { options, model }, None);
        }
    });
    Memo::new(move |_| {
        let options = state.options.get();
        let model = model.get();
        state
            .items
            .get()
            .filter(|(o, m, _)| *o == options && *m == model)
            .map(|(_, _, i)| i)
    })
}

/// Asks the worker for a paired comparison under the options in force.
pub fn request_paired(options: ViewOptions, a: String, b: String) {
    post(&Request::Paired { options, a, b }, None);
}

fn empty_report(o: &ViewOptions) -> Result<Shared<ScoreReport>, String> {
    let o = crate::protocol::score_options(o)?;
    Ok(Shared(Arc::new(ScoreReport::empty(&o))))
}

/// Applies a parsed answer in a task of its own, in the order they came, one per task: parsing a
/// large snapshot (a 500-question file's is ~1 MB of JSON) and rendering everything it changes
/// would otherwise make one long task of the main thread.
fn apply_later(state: AppState, r: Response) {
    let idle = INBOX.with(|q| {
        let mut q = q.borrow_mut();
        q.push_back(r);
        q.len() == 1
    });
    // A task is scheduled exactly while the inbox is not empty.
    if idle {
        schedule_apply(state);
    }
}

fn schedule_apply(state: AppState) {
    set_timeout(
        move || {
            if let Some(r) = INBOX.with(|q| q.borrow_mut().pop_front()) {
                on_response(state, r);
            }
            if INBOX.with(|q| !q.borrow().is_empty()) {
                schedule_apply(state);
            }
        },
        Duration::ZERO,
    );
}

fn on_response(state: AppState, r: Response) {
    let shared = |r: Result<ScoreReport, String>| r.map(|r| Shared(Arc::new(r)));
    match r {
        Response::Loaded {
            options,
            snapshot,
            report,
            intervals_pending,
        } => {
            ASKED.with(|a| a.borrow_mut().clear());
            state.questions.set(BTreeMap::new());
            state.paired.set(None);
            state.items.set(None);
            state.snapshot.set(Shared(Arc::new(snapshot)));
            // index.html asks for the bundled set under the options it read from the URL; if
            // they are not those in force (read differently, or changed meanwhile), ask again.
            let now = state.options.get_untracked();
            if options == now {
                state.intervals_pending.set(intervals_pending);
                state.report.set(shared(report));
            } else if options.keep_bundled != now.keep_bundled {
                post(&Request::Reload { options: now }, None);
            } else {
                post(&Request::Score { options: now }, None);
            }
            state.busy.update(|b| {
                if b.as_deref().is_some_and(|m| m.ends_with('…')) {
                    *b = None;
                }
            });
        }
        Response::Report {
            options,
            report,
            intervals_pending,
        } => {
            // Only the answer for the options still in force is shown.
            if options == state.options.get_untracked() {
                state.intervals_pending.set(intervals_pending);
                state.report.set(shared(report));
            }
        }
        Response::Started {
            files,
            failures,
            failed,
            set,
        } => {
            let none = files.is_empty();
            state.bundled_set.set(set);
            state.fetch_failures.update(|f| f.extend(failed));
            state.files.update(|f| {
                f.extend(files.into_iter().map(|f| InputFile {
                    name: f.name,
                    origin: f.origin,
                    size: f.size,
                }))
            });
            if !failures.is_empty() {
                state
                    .busy
                    .set(Some(format!("Could not fetch: {}", failures.join("; "))));
            } else if none {
                state.busy.set(None);
            }
        }
        Response::Question(q) => state.questions.update(|m| {
            m.insert(q.id.clone(), Shared(Arc::new(q)));
        }),
        Response::Paired {
            options,
            a,
            b,
            report,
        } => state.paired.set(Some((options, a, b, shared(report)))),
        Response::Hashes(h) => state.hashes.update(|m| m.extend(h)),
        Response::Items {
            options,
            model,
            items,
        } => state
            .items
            .set(Some((options, model, Shared(Arc::new(items))))),
    }
}

/// Creates the state and the worker and puts the state in context. Must run inside the router.
pub fn provide_state() -> AppState {
    let query = use_query_map();
    let options = Memo::new(move |_| {
        let q = query.get();
        ViewOptions {
            missing: match q.get("missing").as_deref() {
                Some("exclude") => MissingPolicy::Exclude,
                _ => MissingPolicy::Zero,
            },
            judge: q.get("judge").filter(|j| !j.is_empty()),
            drop: crate::protocol::parse_drop(&q.get("drop").unwrap_or_default()),
            weights: crate::protocol::parse_weights(&q.get("w").unwrap_or_default()),
            keep_bundled: crate::protocol::keep_bundled(
                q.get("keep").as_deref(),
                q.get("set").as_deref(),
                q.get("data").is_some(),
            ),
        }
    });
    let state = AppState {
        files: RwSignal::new(Vec::new()),
        bundled_set: RwSignal::new(None),
        hashes: RwSignal::new(BTreeMap::new()),
        // The worker fetches the data of the URL's query at start (`bin/repoprobe-worker-start.js`)
        // and says which files it got (`Started`), then their tables (`Loaded`).
        busy: RwSignal::new(Some("Loading the data…".into())),
        fetch_failures: RwSignal::new(Vec::new()),
        snapshot: RwSignal::new(Shared(Arc::new(Snapshot::default()))),
        options,
        report: RwSignal::new(empty_report(&ViewOptions::default())),
        intervals_pending: RwSignal::new(false),
        questions: RwSignal::new(BTreeMap::new()),
        paired: RwSignal::new(None),
        items: RwSignal::new(None),
    };

    // For e2e/speed.mjs, which prints how large the page's wasm memory grew.
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"__rpMemory".into(), &wasm_bindgen::memory());
    }
    match started_worker().map(Ok).unwrap_or_else(start_worker) {
        Ok(worker) => {
            // `now`: apply at once rather than in a later task (see `apply_later`).
            let handle = move |text: String, now: bool| {
                if text == READY {
                    let queue = PENDING.with(|p| p.borrow_mut().take()).unwrap_or_default();
                    for (text, blobs) in queue {
                        send(&text, blobs);
                    }
                } else if let Ok(r) = serde_json::from_str::<Response>(&text) {
                    if now {
                        on_response(state, r);
                    } else {
                        apply_later(state, r);
                    }
                }
            };
            let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |ev: web_sys::MessageEvent| {
                    if let Some(text) = ev.data().as_string() {
                        handle(text, false);
                    }
                },
            );
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            on_message.forget();
            WORKER.with(|w| *w.borrow_mut() = Some(worker));
            // Messages the worker sent before this listener existed (index.html kept them) are
            // applied now, before the views are first built: if the tables are already known,
            // the first render shows them, with no render of an empty page before.
            for text in early_messages() {
                handle(text, true);
            }
        }
        Err(e) => state
            .busy
            .set(Some(format!("Could not start the worker: {e:?}"))),
    }

    // New options: only the report changes, unless the files that count change (the bundled
    // set kept or not): then the worker loads again.
    Effect::new(move |prev: Option<ViewOptions>| {
        let o = options.get();
        if let Some(prev) = prev
            && !state.files.with_untracked(|f| f.is_empty())
        {
            if prev.keep_bundled != o.keep_bundled {
                post(&Request::Reload { options: o.clone() }, None);
            } else {
                post(&Request::Score { options: o.clone() }, None);
            }
        }
        o
    });
    provide_context(state);
    state
}
