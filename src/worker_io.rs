//! The Web Worker's browser I/O (`Browser`, the `worker::host::Host` of the browser): posting
//! answers, tasks (`spawn_local`), `Blob`s read as streams, whole or by slice, Range requests,
//! User Timing. It decides nothing: what to read and what to answer is `worker::serve`'s.

use crate::protocol::{ReadError, Response, ViewOptions};
use crate::worker::host::{Host, ReadTimes, Stopped, range_bytes, range_header, range_status};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, DedicatedWorkerGlobalScope, ReadableStreamDefaultReader, ReadableStreamReadResult,
};

/// The worker's global scope, its `performance` looked up once.
pub struct Browser {
    perf: Option<web_sys::Performance>,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            perf: scope().performance(),
        }
    }
}

pub fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// A JavaScript error in words.
pub fn js_err(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

impl Browser {
    /// Reads `blob` through as a stream (see `Host::stream`). The next chunk is asked for before
    /// `f` runs on this one, so the browser reads while we parse.
    async fn read_stream(
        &self,
        blob: &Blob,
        times: &mut ReadTimes,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<u64, Stopped> {
        let reader: ReadableStreamDefaultReader = blob.stream().get_reader().unchecked_into();
        let mut buf: Vec<u8> = Vec::new();
        let mut read = 0u64;
        let mut next = reader.read();
        loop {
            let t0 = self.now();
            let r: ReadableStreamReadResult = JsFuture::from(next)
                .await
                .map_err(|e| Stopped {
                    read,
                    error: ReadError::Browser(js_err(e)),
                })?
                .unchecked_into();
            let t1 = self.now();
            times.wait += t1 - t0;
            if r.get_done().unwrap_or(true) {
                return Ok(read);
            }
            next = reader.read();
            let chunk = r
                .get_value()
                .dyn_into::<Uint8Array>()
                .map_err(|_| Stopped {
                    read,
                    error: ReadError::NotBytes,
                })?;
            buf.resize(chunk.length() as usize, 0);
            chunk.copy_to(&mut buf);
            times.copy += self.now() - t1;
            read += buf.len() as u64;
            f(&buf);
        }
    }

    async fn range(&self, url: String, offset: u64, length: u64) -> Result<Vec<u8>, ReadError> {
        let fetch = |e| ReadError::Fetch(js_err(e));
        let headers = js_sys::Object::new();
        let range = range_header(offset, length);
        let _ = js_sys::Reflect::set(&headers, &"Range".into(), &range.into());
        let init = web_sys::RequestInit::new();
        init.set_headers(&headers);
        let req = web_sys::Request::new_with_str_and_init(&url, &init)
            .map_err(|e| ReadError::Browser(js_err(e)))?;
        let resp: web_sys::Response = JsFuture::from(scope().fetch_with_request(&req))
            .await
            .map_err(fetch)?
            .unchecked_into();
        range_status(resp.status())?;
        let buf = JsFuture::from(
            resp.array_buffer()
                .map_err(|e| ReadError::Browser(js_err(e)))?,
        )
        .await
        .map_err(|e| ReadError::Browser(js_err(e)))?;
        range_bytes(Uint8Array::new(&buf).to_vec(), length)
    }
}

/// A read of `blob` started now (gloo-file's reader starts when made).
fn read(blob: &gloo_file::Blob) -> impl Future<Output = Result<Vec<u8>, ReadError>> + use<> {
    let read = gloo_file::futures::read_as_bytes(blob);
    async move { read.await.map_err(|e| ReadError::Browser(e.to_string())) }
}

impl crate::worker::Handle for Blob {
    fn bytes(&self) -> u64 {
        self.size() as u64
    }
}

impl Host for Browser {
    type Blob = Blob;

    fn reply(&self, r: &Response) {
        // Its buffer transferred, not copied: a snapshot of a large file is megabytes.
        let bytes = Uint8Array::from(&r.encode()[..]);
        let _ = scope().post_message_with_transfer(&bytes, &Array::of1(&bytes.buffer()));
    }

    fn log_error(&self, why: &str) {
        web_sys::console::error_1(&JsValue::from_str(why));
    }

    fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        wasm_bindgen_futures::spawn_local(task);
    }

    /// The worker's name is the page's query: read as the page reads its address.
    fn start_options(&self) -> ViewOptions {
        let params = web_sys::UrlSearchParams::new_with_str(&scope().name()).ok();
        ViewOptions::from_query(|k| params.as_ref().and_then(|p| p.get(k)))
    }

    fn stream(
        &self,
        blob: &Blob,
        times: &mut ReadTimes,
        f: &mut dyn FnMut(&[u8]),
    ) -> impl Future<Output = Result<u64, Stopped>> {
        self.read_stream(blob, times, f)
    }

    fn read_all(&self, blob: &Blob) -> impl Future<Output = Result<Vec<u8>, ReadError>> {
        read(&gloo_file::Blob::from(blob.clone()))
    }

    fn read_slice(
        &self,
        blob: &Blob,
        start: u64,
        end: u64,
    ) -> impl Future<Output = Result<Vec<u8>, ReadError>> {
        read(&gloo_file::Blob::from(blob.clone()).slice(start, end))
    }

    fn fetch_range(
        &self,
        url: &str,
        offset: u64,
        length: u64,
    ) -> impl Future<Output = Result<Vec<u8>, ReadError>> {
        self.range(url.to_string(), offset, length)
    }

    fn now(&self) -> f64 {
        self.perf.as_ref().map_or(0.0, |p| p.now())
    }

    fn mark(&self, name: &str, clear: bool) {
        if let Some(p) = &self.perf {
            if clear {
                p.clear_marks();
                p.clear_measures();
            }
            let _ = p.mark(name);
        }
    }

    fn measure(&self, name: &str, from: &str, to: &str) {
        if let Some(p) = &self.perf {
            let _ = p.measure_with_start_mark_and_end_mark(name, from, to);
        }
    }

    fn measure_total(&self, name: &str, start: f64, ms: f64) {
        let Some(p) = &self.perf else { return };
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"start".into(), &start.into());
        let _ = js_sys::Reflect::set(&o, &"duration".into(), &ms.into());
        if let Ok(f) = js_sys::Reflect::get(p, &"measure".into())
            && let Ok(f) = f.dyn_into::<js_sys::Function>()
        {
            let _ = f.call2(p, &name.into(), &o);
        }
    }
}
