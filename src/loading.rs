//! The page's browser I/O: reading dropped or picked files, and downloading exports. Results
//! reach the pages through [`crate::state::AppState`]. (The bundled data and `?data=URL` files
//! are fetched by the worker's start script, `bin/repoprobe-worker-start.js`, before either
//! wasm runs, and never pass through this page.)

use crate::state::{AppState, InputFile, Origin};
use js_sys::Array;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

/// A file read into a JS buffer; its bytes never enter the page's wasm memory.
struct Read {
    name: String,
    origin: Origin,
    buffer: js_sys::ArrayBuffer,
}

/// Hands files to the worker (their buffers are transferred, not copied); it also hashes them.
fn add_files(state: AppState, files: Vec<Read>) {
    if files.is_empty() {
        return;
    }
    let inputs: Vec<InputFile> = files
        .iter()
        .map(|f| InputFile {
            name: f.name.clone(),
            origin: f.origin,
            size: f.buffer.byte_length() as usize,
        })
        .collect();
    crate::state::add_files(state, inputs, files.into_iter().map(|f| f.buffer).collect());
}

/// Reads files the user dropped or picked, and adds them to the loaded data.
pub fn load_user_files(state: AppState, list: web_sys::FileList) {
    let files: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
    if files.is_empty() {
        return;
    }
    leptos::task::spawn_local(async move {
        let mut read = Vec::new();
        let mut failures = Vec::new();
        for file in files {
            state.busy.set(Some(format!(
                "Reading {} ({} bytes)…",
                file.name(),
                file.size()
            )));
            match JsFuture::from(file.array_buffer())
                .await
                .and_then(|b| b.dyn_into::<js_sys::ArrayBuffer>())
            {
                Ok(buffer) => read.push(Read {
                    name: file.name(),
                    origin: Origin::Dropped,
                    buffer,
                }),
                Err(e) => failures.push(format!("{}: {}", file.name(), js_err(e))),
            }
        }
        if !failures.is_empty() {
            state
                .busy
                .set(Some(format!("Could not read: {}", failures.join("; "))));
        }
        add_files(state, read);
    });
}

/// Offers `text` as a file download.
pub fn download(name: &str, mime: &str, text: &str) {
    let parts = Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Some(a) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}
