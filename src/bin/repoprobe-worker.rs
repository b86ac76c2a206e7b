//! The site's Web Worker: it owns the loaded dataset and runs `load` and `score` off the main
//! thread, so that a large results file never freezes the page. It speaks `protocol`. This is
//! only its message loop: each message handed to `repoprobe_site::worker::serve::Service`,
//! which decides what to read and what to answer (tested natively), through the browser's I/O
//! (`repoprobe_site::worker_io::Browser`), which posts the answers.
//!
//! It holds the files as `Blob`s (a dropped `File` is the user's file on disk; a fetched body is
//! the browser's copy), never their bytes: each load streams them chunk by chunk into the core's
//! `StreamLoader` with the texts skipped, so a 1 GB file never sits whole in wasm memory (nor
//! in the page's), and hashes them in a second read after the tables are out. The answers and
//! rationales of a question are read back by byte range when its view first asks for them.

#[cfg(target_arch = "wasm32")]
fn main() {
    glue::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod glue {
    use js_sys::{Array, Uint8Array};
    use repoprobe_site::protocol::READY;
    use repoprobe_site::worker::serve::Service;
    use repoprobe_site::worker_io::{Browser, scope};
    use std::rc::Rc;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::{Blob, MessageEvent};

    thread_local! {
        static SERVICE: Rc<Service<Browser>> = Service::new(Browser::default());
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope = scope();
        // The worker's one listener, for as long as the worker lives.
        gloo_events::EventListener::new(&scope, "message", |ev| {
            if let Some(ev) = ev.dyn_ref::<MessageEvent>() {
                handle(ev);
            }
        })
        .forget();
        // For e2e/speed.mjs, which prints how large the worker's wasm memory grew.
        let _ = js_sys::Reflect::set(&scope, &"__rpMemory".into(), &wasm_bindgen::memory());
        let _ = scope.post_message(&JsValue::from_str(READY));
    }

    /// A message is `[request, [Blob...]]`: the request's bytes (a `Uint8Array`, `protocol`'s
    /// encoding), or the start script's JSON text, and, for `add` and `started`, the files (by
    /// position; anything else than a `Blob` is none).
    fn handle(ev: &MessageEvent) {
        let data = ev.data();
        let head = data.dyn_ref::<Array>().map(|d| d.get(0));
        // Without files (every request but `add` and `started`), none.
        let files = Array::from(&data).get(1);
        let blobs = files.dyn_ref::<Array>().map_or_else(Vec::new, |a| {
            a.iter().map(|b| b.dyn_into::<Blob>().ok()).collect()
        });
        match head {
            Some(h) if h.is_instance_of::<Uint8Array>() => {
                let bytes = Uint8Array::from(h).to_vec();
                SERVICE.with(|s| s.receive(&bytes, blobs));
            }
            Some(h) if h.is_string() => {
                let text = h.as_string().unwrap_or_default();
                SERVICE.with(|s| s.receive_started(&text, blobs));
            }
            _ => {
                let what = data.as_string().unwrap_or_else(|| format!("{data:?}"));
                let why =
                    format!("the worker got a message that is not [request, files]: {what:?}");
                SERVICE.with(|s| s.reject(why));
            }
        }
    }
}
