//! The site's Web Worker: it owns the loaded dataset and runs `load` and `score` off the main
//! thread, so that a large results file never freezes the page. It speaks `protocol`.

#[cfg(target_arch = "wasm32")]
fn main() {
    worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod worker {
    use js_sys::{Array, Uint8Array};
    use repoprobe_core::{LoadOptions, Loaded, SourceFile, load, score};
    use repoprobe_site::protocol::{
        QuestionData, Request, Response, Snapshot, ViewOptions, score_options,
    };
    use std::cell::RefCell;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    thread_local! {
        static LOADED: RefCell<Loaded> = RefCell::new(Loaded::default());
        /// Every file added so far: the dataset is always loaded from all of them.
        static FILES: RefCell<Vec<(String, Vec<u8>)>> = const { RefCell::new(Vec::new()) };
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(handle);
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let _ = scope.post_message(&JsValue::from_str(repoprobe_site::protocol::READY));
    }

    fn reply(r: &Response) {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let text = serde_json::to_string(r).unwrap_or_default();
        let _ = scope.post_message(&JsValue::from_str(&text));
    }

    /// The report for the page, without the per-item rows: those are large and only some
    /// views want them (`Request::Items`).
    fn report(options: &ViewOptions) -> Result<repoprobe_core::ScoreReport, String> {
        LOADED.with(|l| {
            let l = l.borrow();
            let mut o = score_options(options)?;
            o.items = false;
            score(&l.dataset, &l.issues, &o).map_err(|e| e.to_string())
        })
    }

    /// A message is `[json, [ArrayBuffer...]]`: the request and, for `load`, the files' bytes.
    fn handle(ev: MessageEvent) {
        let data = Array::from(&ev.data());
        let Some(text) = data.get(0).as_string() else {
            return;
        };
        let Ok(req) = serde_json::from_str::<Request>(&text) else {
            return;
        };
        match req {
            Request::Add { names, options } => {
                let buffers = Array::from(&data.get(1));
                let added: Vec<String> = names.clone();
                FILES.with(|files| {
                    let mut files = files.borrow_mut();
                    files.extend(
                        names
                            .into_iter()
                            .zip(buffers.iter().map(|b| Uint8Array::new(&b).to_vec())),
                    );
                    let sources: Vec<SourceFile> = files
                        .iter()
                        .map(|(name, bytes)| SourceFile { name, bytes })
                        .collect();
                    // First without rationales and answers (scores never read them): the tables
                    // show sooner. Then with them, for the question views; requests that arrive
                    // meanwhile wait in the worker's queue.
                    let fast = load(
                        &sources,
                        LoadOptions {
                            skip_text: true,
                            ..LoadOptions::default()
                        },
                    );
                    let snapshot = Snapshot::of(&fast);
                    LOADED.with(|l| *l.borrow_mut() = fast);
                    let report = report(&options);
                    reply(&Response::Loaded {
                        options,
                        snapshot,
                        report,
                    });
                    let full = load(&sources, LoadOptions::default());
                    LOADED.with(|l| *l.borrow_mut() = full);
                    let hashes = files
                        .iter()
                        .filter(|(name, _)| added.contains(name))
                        .map(|(name, bytes)| {
                            (name.clone(), repoprobe_site::protocol::sha256_hex(bytes))
                        })
                        .collect();
                    reply(&Response::Hashes(hashes));
                });
            }
            Request::Score { options } => {
                let r = report(&options);
                reply(&Response::Report { options, report: r });
            }
            Request::Items { options } => {
                let items = LOADED.with(|l| {
                    let l = l.borrow();
                    // The items do not depend on the bootstrap: skip it.
                    score_options(&options)
                        .ok()
                        .and_then(|o| {
                            let o = repoprobe_core::ScoreOptions { bootstrap: 0, ..o };
                            score(&l.dataset, &l.issues, &o).ok()
                        })
                        .and_then(|r| r.items)
                        .unwrap_or_default()
                });
                reply(&Response::Items { options, items });
            }
            Request::Question { id } => {
                let q = LOADED.with(|l| QuestionData::of(&l.borrow().dataset, &id));
                reply(&Response::Question(q));
            }
            Request::Paired { options, a, b } => {
                let r = score_options(&options).and_then(|mut o| {
                    o.items = false;
                    o.compare = Some((a.clone(), b.clone()));
                    LOADED.with(|l| {
                        let l = l.borrow();
                        score(&l.dataset, &l.issues, &o).map_err(|e| e.to_string())
                    })
                });
                reply(&Response::Paired {
                    options,
                    a,
                    b,
                    report: r,
                });
            }
        }
    }
}
