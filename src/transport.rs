//! The page's end of the wire to the worker: starting it (or taking over the one index.html
//! started), holding requests until it is ready, sending them with the files beside, and
//! receiving its answers, each applied in a task of its own (`crate::reducer`). No decision
//! about what to ask is made here (`crate::requests`).

use crate::protocol::{READY, Request, Response, Started};
use crate::state::{AppState, Busy};
use gloo_events::EventListener;
use js_sys::{Array, Uint8Array};
use leptos::prelude::*;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// A request to the worker: its bytes ([`Request::encode`]) and the files (`Blob`s) that go
/// with it.
type Message = (Vec<u8>, Option<Array>);

thread_local! {
    static WORKER: RefCell<Option<web_sys::Worker>> = const { RefCell::new(None) };
    /// Messages wait here until the worker says it is ready: a worker drops messages that
    /// arrive before its (asynchronously instantiated) wasm has set its handler.
    static PENDING: RefCell<Option<Vec<Message>>> = const { RefCell::new(Some(Vec::new())) };
    /// The worker's one listener, removed when dropped (never: the page keeps its worker).
    static LISTENER: RefCell<Option<EventListener>> = const { RefCell::new(None) };
    /// The worker's answers, parsed, waiting to be applied (see [`apply_later`]).
    static INBOX: RefCell<VecDeque<Response>> = const { RefCell::new(VecDeque::new()) };
}

/// The worker's start script (`bin/repoprobe-worker-start.js`); index.html starts it.
const WORKER_URL: &str = "./repoprobe-worker-start.js";

/// Sends a request to the worker (held until it is ready); `blobs` go beside it.
pub fn post(req: &Request, blobs: Option<Array>) {
    let bytes = req.encode();
    let queued = PENDING.with(|p| match p.borrow_mut().as_mut() {
        Some(queue) => {
            queue.push((bytes.clone(), blobs.clone()));
            true
        }
        None => false,
    });
    if !queued {
        send(&bytes, blobs);
    }
}

/// Posts a request; `Blob`s are cloned as handles (the browser shares the data), so nothing is
/// copied or transferred.
fn send(bytes: &[u8], blobs: Option<Array>) {
    WORKER.with(|w| {
        if let Some(w) = w.borrow().as_ref() {
            let msg = Array::of2(
                &Uint8Array::from(bytes),
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
fn early_messages() -> Vec<JsValue> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let Ok(list) = js_sys::Reflect::get(&window, &JsValue::from_str("__rpEarly")) else {
        return Vec::new();
    };
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("__rpEarly"), &Array::new());
    Array::from(&list).iter().collect()
}

/// Applies a parsed answer in a task of its own, in the order they came, one per task: parsing a
/// large snapshot (a 500-question file's is ~1 MB) and rendering everything it changes
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
                apply(state, r);
            }
            if INBOX.with(|q| !q.borrow().is_empty()) {
                schedule_apply(state);
            }
        },
        Duration::ZERO,
    );
}

/// Applies an answer now, sending the requests it calls for.
fn apply(state: AppState, r: Response) {
    for req in crate::reducer::apply(state, r) {
        post(&req, None);
    }
}

/// One message of the worker: `READY` (then the requests held go), the start script's
/// `started` (JSON text), or an answer (bytes, [`Response::encode`]). One that reads as none of
/// them is reported on the console, never dropped silently. `now`: apply at once rather than in
/// a later task (see [`apply_later`]).
fn receive(state: AppState, data: JsValue, now: bool) {
    let read = if let Some(text) = data.as_string() {
        if text == READY {
            let queue = PENDING.with(|p| p.borrow_mut().take()).unwrap_or_default();
            for (bytes, blobs) in queue {
                send(&bytes, blobs);
            }
            return;
        }
        Started::from_script(&text).map(Response::Started)
    } else if let Some(bytes) = data.dyn_ref::<Uint8Array>() {
        Response::decode(&bytes.to_vec())
    } else {
        return leptos::logging::error!("the worker sent a message that is neither text nor bytes");
    };
    match read {
        Ok(r) if now => apply(state, r),
        Ok(r) => apply_later(state, r),
        Err(e) => leptos::logging::error!("the page could not read the worker's answer: {e}"),
    }
}

/// Connects `state` to the worker index.html started (or starts one): its answers change the
/// state from now on (`crate::reducer`).
pub fn connect(state: AppState) {
    // For e2e/speed.mjs, which prints how large the page's wasm memory grew.
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"__rpMemory".into(), &wasm_bindgen::memory());
    }
    let worker = match started_worker().map(Ok).unwrap_or_else(start_worker) {
        Ok(worker) => worker,
        Err(e) => {
            state
                .busy
                .set(Busy::Failed(format!("Could not start the worker: {e:?}")));
            return;
        }
    };
    // index.html's handler kept the worker's first messages for the app: the app's own takes
    // over (and reads what that one kept, below).
    worker.set_onmessage(None);
    let listener = EventListener::new(&worker, "message", move |ev| {
        if let Some(m) = ev.dyn_ref::<web_sys::MessageEvent>() {
            receive(state, m.data(), false);
        }
    });
    LISTENER.with(|l| *l.borrow_mut() = Some(listener));
    WORKER.with(|w| *w.borrow_mut() = Some(worker));
    // Messages the worker sent before this listener existed (index.html kept them) are applied
    // now, before the views are first built: if the tables are already known, the first render
    // shows them, with no render of an empty page before.
    for data in early_messages() {
        receive(state, data, true);
    }
}
