//! The page's browser I/O: reading dropped or picked files, and downloading exports. Results
//! reach the pages through [`crate::state::AppState`]. (The bundled data and `?data=URL` files
//! are fetched by the worker's start script, `bin/repoprobe-worker-start.js`, before either
//! wasm runs, and never pass through this page.)

use crate::state::{AppState, InputFile, Origin};
use wasm_bindgen::JsCast;

/// Hands the files the user dropped or picked to the worker, which adds them to the loaded data.
/// Only their handles travel (a `File` is cloned as a reference to the file on disk): the worker
/// reads them as streams, and nothing is read on this thread.
pub fn load_user_files(state: AppState, list: web_sys::FileList) {
    let files: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
    if files.is_empty() {
        return;
    }
    let inputs = files
        .iter()
        .map(|f| InputFile {
            name: f.name(),
            origin: Origin::Dropped,
            size: f.size() as usize,
        })
        .collect();
    crate::requests::add_files(state, inputs, files.into_iter().map(Into::into).collect());
}

/// Offers `text` as a file download.
pub fn download(name: &str, mime: &str, text: &str) {
    let blob = gloo_file::Blob::new_with_options(text, Some(mime));
    // Revoked when dropped, after the click that starts the download.
    let url = gloo_file::ObjectUrl::from(blob);
    if let Some(a) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
}
