//! The only browser I/O of the site: fetching the bundled data and `?data=URL` files, reading
//! dropped or picked files, hashing them, and downloading exports. Results reach the pages
//! through [`crate::state::AppState`].

use crate::state::{AppState, InputFile, Origin};
use js_sys::{Array, Uint8Array};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The manifest of bundled files, relative to the site root.
const MANIFEST: &str = "public-data/index.json";

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Fetches a URL's bytes.
pub async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let buf = response_buffer(url, JsFuture::from(window.fetch_with_str(url)).await).await?;
    Ok(Uint8Array::new(&buf).to_vec())
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

/// Starts fetching every URL at once and returns the responses' buffers in order.
async fn fetch_all(urls: &[String]) -> Vec<Result<js_sys::ArrayBuffer, String>> {
    let Some(window) = web_sys::window() else {
        return urls.iter().map(|_| Err("no window".to_string())).collect();
    };
    // The requests run in parallel from here on; awaiting them in order costs nothing.
    let pending: Vec<js_sys::Promise> = urls.iter().map(|u| window.fetch_with_str(u)).collect();
    let mut out = Vec::new();
    for (url, p) in urls.iter().zip(pending) {
        out.push(response_buffer(url, JsFuture::from(p).await).await);
    }
    out
}

async fn response_buffer(
    url: &str,
    resp: Result<JsValue, JsValue>,
) -> Result<js_sys::ArrayBuffer, String> {
    let resp: web_sys::Response = resp.map_err(js_err)?.dyn_into().map_err(js_err)?;
    if !resp.ok() {
        return Err(format!("HTTP {} for {url}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(js_err)?)
        .await
        .map_err(js_err)?;
    buf.dyn_into().map_err(js_err)
}

/// The bundled files of a set named in the manifest (the default set when `set` is `None`).
fn manifest_files(manifest: &serde_json::Value, set: Option<&str>) -> Result<Vec<String>, String> {
    let name = set
        .or_else(|| manifest.get("default").and_then(|d| d.as_str()))
        .unwrap_or("paper");
    manifest
        .get("sets")
        .and_then(|s| s.get(name))
        .and_then(|s| s.get("files"))
        .and_then(|f| serde_json::from_value(f.clone()).ok())
        .ok_or_else(|| format!("no bundled data set named {name:?}"))
}

/// Loads a bundled data set (`?set=NAME`, `none` for none) and every `?data=URL` at start.
pub fn load_initial(state: AppState, set: Option<String>, data_urls: Vec<String>) {
    leptos::task::spawn_local(async move {
        state.busy.set(Some("Loading the bundled data…".into()));
        let mut files = Vec::new();
        let mut failures = Vec::new();
        let manifest = if set.as_deref() == Some("none") {
            Ok(Vec::new())
        } else {
            fetch_bytes(MANIFEST).await.and_then(|bytes| {
                serde_json::from_slice::<serde_json::Value>(&bytes)
                    .map_err(|e| format!("{MANIFEST}: {e}"))
                    .and_then(|m| manifest_files(&m, set.as_deref()))
            })
        };
        let mut urls: Vec<(String, Origin)> = Vec::new();
        match manifest {
            Ok(names) => urls.extend(
                names
                    .into_iter()
                    .map(|n| (format!("public-data/{n}"), Origin::Bundled)),
            ),
            Err(e) => failures.push(e),
        }
        urls.extend(data_urls.into_iter().map(|u| (u, Origin::Url)));
        let names: Vec<String> = urls.iter().map(|(u, _)| u.clone()).collect();
        for ((url, origin), result) in urls.into_iter().zip(fetch_all(&names).await) {
            match result {
                Ok(buffer) => files.push(Read {
                    name: url,
                    origin,
                    buffer,
                }),
                Err(e) => failures.push(format!("{url}: {e}")),
            }
        }
        if failures.is_empty() {
            state.busy.set(None);
        } else {
            state
                .busy
                .set(Some(format!("Could not fetch: {}", failures.join("; "))));
        }
        add_files(state, files);
    });
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
