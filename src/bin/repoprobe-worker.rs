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
        Origin, QuestionData, Request, Response, Snapshot, ViewOptions, counted, score_options,
    };
    use std::cell::RefCell;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    thread_local! {
        static LOADED: RefCell<Loaded> = RefCell::new(Loaded::default());
        /// Every file added so far, with its origin: the dataset is loaded from those that count
        /// (`protocol::counted`).
        static FILES: RefCell<Vec<(String, Origin, Vec<u8>)>> = const { RefCell::new(Vec::new()) };
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

    /// Loads the files that count under `options` (the bundled set only if kept or alone, see
    /// `protocol::counted`) and answers with their tables.
    fn reload(options: ViewOptions) {
        FILES.with(|files| {
            let files = files.borrow();
            let user = files.iter().any(|(_, o, _)| *o != Origin::Bundled);
            let sources: Vec<SourceFile> = files
                .iter()
                .filter(|(_, o, _)| counted(*o, options.keep_bundled, user))
                .map(|(name, _, bytes)| SourceFile { name, bytes })
                .collect();
            // First without rationales and answers (scores never read them): the tables show
            // sooner. Then with them, for the question views; requests that arrive meanwhile
            // wait in the worker's queue.
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
        });
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
            Request::Add {
                names,
                origins,
                options,
            } => {
                let buffers = Array::from(&data.get(1));
                let added: Vec<String> = names.clone();
                FILES.with(|files| {
                    files.borrow_mut().extend(
                        names
                            .into_iter()
                            .enumerate()
                            .zip(buffers.iter().map(|b| Uint8Array::new(&b).to_vec()))
                            .map(|((i, name), bytes)| {
                                (
                                    name,
                                    origins.get(i).copied().unwrap_or(Origin::Dropped),
                                    bytes,
                                )
                            }),
                    );
                });
                reload(options);
                let hashes = FILES.with(|files| {
                    files
                        .borrow()
                        .iter()
                        .filter(|(name, _, _)| added.contains(name))
                        .map(|(name, _, bytes)| {
                            (name.clone(), repoprobe_site::protocol::sha256_hex(bytes))
                        })
                        .collect()
                });
                reply(&Response::Hashes(hashes));
            }
            Request::Reload { options } => reload(options),
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
