//! The site's Web Worker: it owns the loaded dataset and runs `load` and `score` off the main
//! thread, so that a large results file never freezes the page. It speaks `protocol`.
//!
//! It holds the files as `Blob`s (a dropped `File` is the user's file on disk; a fetched body is
//! the browser's copy), never their bytes: each load streams them chunk by chunk into the core's
//! `StreamLoader` with the texts skipped, so a 1 GB file never sits whole in wasm memory (nor
//! in the page's), and hashes them in a second read after the tables are out. The answers and
//! rationales of a question are read back by byte range when its view first asks for them.

#[cfg(target_arch = "wasm32")]
fn main() {
    worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod worker {
    use js_sys::{Array, Uint8Array};
    use repoprobe_core::{
        Issue, LoadOptions, Loaded, RecordKind, Severity, Span, StreamLoader, score,
    };
    use repoprobe_site::protocol::{
        Origin, QuestionData, Request, Response, Snapshot, ViewOptions, batch_ranges, counted,
        defer_intervals, hex, score_options,
    };
    use sha2::Digest;
    use std::cell::{Cell, RefCell};
    use std::collections::{BTreeSet, VecDeque};
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{
        Blob, DedicatedWorkerGlobalScope, MessageEvent, ReadableStreamDefaultReader,
        ReadableStreamReadResult,
    };

    /// A file given to the worker.
    struct Held {
        name: String,
        origin: Origin,
        blob: Blob,
        /// Whether its hash was computed (or tried: a file that cannot be read has none).
        hash_tried: bool,
    }

    thread_local! {
        static LOADED: RefCell<Loaded> = RefCell::new(Loaded::default());
        /// Every file added so far, with its origin: the dataset is loaded from those that count
        /// (`protocol::counted`).
        static FILES: RefCell<Vec<Held>> = const { RefCell::new(Vec::new()) };
        /// The files of the dataset loaded, by the number the loader gave them (`Span::file`).
        static SOURCES: RefCell<Vec<Blob>> = const { RefCell::new(Vec::new()) };
        /// Records whose texts were read back since the last load: (kind, index).
        static FILLED: RefCell<BTreeSet<(u8, usize)>> = const { RefCell::new(BTreeSet::new()) };
        /// Requests not served yet, in order: serving one may wait for the browser (reading a
        /// file), and the next must not start before it ends (a `Question` after an `Add` must
        /// see the new data).
        static QUEUE: RefCell<VecDeque<(Request, JsValue)>> = const { RefCell::new(VecDeque::new()) };
        static SERVING: Cell<bool> = const { Cell::new(false) };
        /// Whether a task is hashing files (see [`hash_in_background`]).
        static HASHING: Cell<bool> = const { Cell::new(false) };
    }

    /// Records this close together (bytes) are read back with one slice of their file: a
    /// slice read costs a round trip to the browser, a few KB more cost nothing.
    const GAP: u64 = 64 * 1024;
    /// The most one slice read holds (bytes), so that a question whose records are spread over
    /// a large file does not read all of it.
    const MAX_READ: u64 = 8 * 1024 * 1024;

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(handle);
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        // For e2e/speed.mjs, which prints how large the worker's wasm memory grew.
        let _ = js_sys::Reflect::set(&scope, &"__rpMemory".into(), &wasm_bindgen::memory());
        let _ = scope.post_message(&JsValue::from_str(repoprobe_site::protocol::READY));
    }

    fn reply(r: &Response) {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let text = serde_json::to_string(r).unwrap_or_default();
        let _ = scope.post_message(&JsValue::from_str(&text));
    }

    fn js_err(e: JsValue) -> String {
        e.dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .or_else(|| e.as_string())
            .unwrap_or_else(|| format!("{e:?}"))
    }

    /// The report for the page, without the per-item rows: those are large and only some
    /// views want them (`Request::Items`); with `bootstrap: 0`, without the intervals too.
    fn report(
        options: &ViewOptions,
        bootstrap: Option<u32>,
    ) -> Result<repoprobe_core::ScoreReport, String> {
        LOADED.with(|l| {
            let l = l.borrow();
            let mut o = score_options(options)?;
            o.items = false;
            o.bootstrap = bootstrap.unwrap_or(o.bootstrap);
            score(&l.dataset, &l.issues, &o).map_err(|e| e.to_string())
        })
    }

    /// The report the page gets first, and whether its intervals follow in a second answer
    /// (`protocol::defer_intervals`: on large data the tables are not held back for the
    /// bootstrap; every other number is the same).
    fn first_report(options: &ViewOptions) -> (Result<repoprobe_core::ScoreReport, String>, bool) {
        let Ok(full) = score_options(options) else {
            return (report(options, None), false);
        };
        let quick = report(options, Some(0));
        match &quick {
            Ok(q) if full.bootstrap > 0 && defer_intervals(q, &full) => (quick, true),
            _ => (report(options, None), false),
        }
    }

    /// Answers the intervals [`first_report`] deferred: the whole report, as a `Report`.
    fn send_intervals(options: ViewOptions, phases: &mut Phases) {
        let report = report(&options, None);
        phases.end("rp:intervals");
        reply(&Response::Report {
            options,
            report,
            intervals_pending: false,
        });
        phases.end("rp:intervals-reply");
    }

    /// The phases of a load as User Timing measures: the browser's profiler shows them, and
    /// e2e/speed.mjs prints them.
    struct Phases {
        perf: Option<web_sys::Performance>,
        last: String,
    }

    impl Phases {
        /// Phases from now on, named after `start`; a load (`clear`) forgets earlier ones.
        fn start(start: &str, clear: bool) -> Phases {
            let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
            let perf = scope.performance();
            if let Some(p) = &perf {
                if clear {
                    p.clear_marks();
                    p.clear_measures();
                }
                let _ = p.mark(start);
            }
            Phases {
                perf,
                last: start.into(),
            }
        }

        fn end(&mut self, name: &str) {
            if let Some(p) = &self.perf {
                let mark = format!("{name}:end");
                let _ = p.mark(&mark);
                let _ = p.measure_with_start_mark_and_end_mark(name, &self.last, &mark);
                self.last = mark;
            }
        }

        /// Now, in ms (0 without a clock).
        fn now(&self) -> f64 {
            self.perf.as_ref().map_or(0.0, |p| p.now())
        }

        /// A measure `name` of `ms` in all, from `start`: the sum of a phase's slices (reading,
        /// parsing) that alternate inside one measure.
        fn total(&self, name: &str, start: f64, ms: f64) {
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

    /// Where a load's reading time goes: waiting for the browser, copying into wasm memory, and
    /// (measured by the caller) parsing.
    #[derive(Default)]
    struct ReadTimes {
        wait: f64,
        copy: f64,
    }

    /// Reads `blob` through as a stream, handing each chunk to `f`; the bytes read so far and
    /// the reason if the browser could not read it all (the file changed or went away). The
    /// next chunk is asked for before `f` runs on this one, so the browser reads while we parse.
    async fn stream(
        blob: &Blob,
        clock: &Phases,
        times: &mut ReadTimes,
        mut f: impl FnMut(&[u8]),
    ) -> Result<u64, (u64, String)> {
        let reader: ReadableStreamDefaultReader = blob.stream().get_reader().unchecked_into();
        let mut buf: Vec<u8> = Vec::new();
        let mut read = 0u64;
        let mut next = reader.read();
        loop {
            let t0 = clock.now();
            let r: ReadableStreamReadResult = JsFuture::from(next)
                .await
                .map_err(|e| (read, js_err(e)))?
                .unchecked_into();
            let t1 = clock.now();
            times.wait += t1 - t0;
            if r.get_done().unwrap_or(true) {
                return Ok(read);
            }
            next = reader.read();
            let chunk = r.get_value().dyn_into::<Uint8Array>().map_err(|_| {
                (
                    read,
                    "the browser gave something else than bytes".to_string(),
                )
            })?;
            buf.resize(chunk.length() as usize, 0);
            chunk.copy_to(&mut buf);
            times.copy += clock.now() - t1;
            read += buf.len() as u64;
            f(&buf);
        }
    }

    /// Loads the files that count under `options` (the bundled set only if kept or alone, see
    /// `protocol::counted`), reading each as a stream with the texts skipped (scores never read
    /// them; a question view reads its own back, see [`fill_question`]), and answers with their
    /// tables.
    async fn reload(options: ViewOptions) {
        let sources: Vec<(String, Blob)> = FILES.with(|files| {
            let files = files.borrow();
            let user = files.iter().any(|f| f.origin != Origin::Bundled);
            files
                .iter()
                .filter(|f| counted(f.origin, options.keep_bundled, user))
                .map(|f| (f.name.clone(), f.blob.clone()))
                .collect()
        });
        // The last load's data goes first: requests wait while this one runs, so nothing reads
        // it, and a second large load then reuses its memory rather than adding to it.
        LOADED.with(|l| *l.borrow_mut() = Loaded::default());
        SOURCES.with(|s| s.borrow_mut().clear());
        let mut loader = StreamLoader::new(LoadOptions {
            skip_text: true,
            ..LoadOptions::default()
        });
        let mut unread = Vec::new();
        let mut phases = Phases::start("rp:start", true);
        let mut times = ReadTimes::default();
        let mut parse = 0.0;
        let begun = phases.now();
        for (name, blob) in &sources {
            loader.begin_file(name);
            let clock = &phases;
            let feed = |chunk: &[u8]| {
                let t = clock.now();
                loader.feed(chunk);
                parse += clock.now() - t;
            };
            let r = stream(blob, clock, &mut times, feed).await;
            loader.end_file();
            if let Err((at, why)) = r {
                unread.push(Issue {
                    file: name.clone(),
                    location: format!("byte {at}"),
                    message: format!(
                        "the browser could not read the file beyond this point: {why}"
                    ),
                    severity: Severity::File,
                });
            }
        }
        phases.end("rp:read+parse");
        phases.total("rp:(wait)", begun, times.wait);
        phases.total("rp:(copy)", begun, times.copy);
        phases.total("rp:(parse)", begun, parse);
        let mut loaded = loader.finish();
        phases.end("rp:finish");
        loaded.issues.extend(unread);
        let snapshot = Snapshot::of(&loaded);
        LOADED.with(|l| *l.borrow_mut() = loaded);
        SOURCES.with(|s| *s.borrow_mut() = sources.into_iter().map(|(_, b)| b).collect());
        FILLED.with(|f| f.borrow_mut().clear());
        phases.end("rp:snapshot");
        let (report, pending) = first_report(&options);
        phases.end("rp:score");
        reply(&Response::Loaded {
            options: options.clone(),
            snapshot,
            report,
            intervals_pending: pending,
        });
        phases.end("rp:reply");
        if pending {
            send_intervals(options, &mut phases);
        }
    }

    /// Hashes every file not hashed yet, in a task of its own, answering each hash as it is
    /// known: hashing runs at ~100 MB/s in wasm, so it must neither hold back the tables (it
    /// runs after the load that reads the files) nor the requests that come meanwhile (they are
    /// served between the chunks it reads). One such task at a time; it picks up files added
    /// while it runs.
    fn hash_in_background() {
        if HASHING.with(|h| h.replace(true)) {
            return;
        }
        wasm_bindgen_futures::spawn_local(async {
            loop {
                let next = FILES.with(|f| {
                    f.borrow()
                        .iter()
                        .position(|f| !f.hash_tried)
                        .map(|i| (i, f.borrow()[i].blob.clone()))
                });
                let Some((i, blob)) = next else { break };
                FILES.with(|f| f.borrow_mut()[i].hash_tried = true);
                let mut h = sha2::Sha256::new();
                // A file that cannot be read has no hash; its load says why.
                let clock = Phases {
                    perf: None,
                    last: String::new(),
                };
                let mut times = ReadTimes::default();
                if stream(&blob, &clock, &mut times, |c| h.update(c))
                    .await
                    .is_ok()
                {
                    let hash = hex(&h.finalize());
                    let name = FILES.with(|f| f.borrow()[i].name.clone());
                    reply(&Response::Hashes(vec![(name, hash)]));
                }
            }
            HASHING.with(|h| h.set(false));
        });
    }

    fn kind_code(kind: RecordKind) -> u8 {
        RecordKind::ALL.iter().position(|&k| k == kind).unwrap_or(0) as u8
    }

    /// Reads back the texts of question `id`'s answers and judgments that the load skipped;
    /// what could not be read (a file changed since it was loaded) is said in the error.
    async fn fill_question(id: &str) -> Result<(), String> {
        // (file, span, kind, index) of each record still without its texts.
        let wanted: Vec<(RecordKind, usize, Span)> = LOADED.with(|l| {
            let l = l.borrow();
            let d = &l.dataset;
            let Some(spans) = d.spans.as_ref() else {
                return Vec::new();
            };
            let filled = FILLED.with(|f| f.borrow().clone());
            let mut out = Vec::new();
            let mut take = |kind: RecordKind, i: usize, spans: &[Span]| {
                if let Some(&s) = spans.get(i)
                    && !filled.contains(&(kind_code(kind), i))
                {
                    out.push((kind, i, s));
                }
            };
            for (i, a) in d.answers.iter().enumerate() {
                if a.question_id == id {
                    take(RecordKind::Answer, i, &spans.answers);
                }
            }
            for (i, j) in d.judgments.iter().enumerate() {
                if j.question_id == id {
                    take(RecordKind::Judgment, i, &spans.judgments);
                }
            }
            out
        });
        let sources = SOURCES.with(|s| s.borrow().clone());
        let mut errors: Vec<String> = Vec::new();
        let files: BTreeSet<u32> = wanted.iter().map(|w| w.2.file).collect();
        for file in files {
            let mine: Vec<&(RecordKind, usize, Span)> =
                wanted.iter().filter(|w| w.2.file == file).collect();
            let Some(blob) = sources.get(file as usize) else {
                errors.push(format!("no file number {file}"));
                continue;
            };
            let ranges: Vec<(u64, u64)> = mine.iter().map(|w| (w.2.start, w.2.end)).collect();
            let batches = batch_ranges(&ranges, GAP, MAX_READ);
            // Every slice asked for at once: the browser reads them while none is waited on.
            let reads = Array::new();
            for b in &batches {
                match blob.slice_with_f64_and_f64(b.start as f64, b.end as f64) {
                    Ok(s) => reads.push(&s.array_buffer()),
                    Err(e) => reads.push(&js_sys::Promise::reject(&e)),
                };
            }
            let buffers = match JsFuture::from(js_sys::Promise::all(&reads)).await {
                Ok(v) => Array::from(&v),
                Err(e) => {
                    errors.push(js_err(e));
                    continue;
                }
            };
            for (b, buffer) in batches.iter().zip(buffers.iter()) {
                let bytes = Uint8Array::new(&buffer).to_vec();
                for &m in &b.members {
                    let (kind, index, span) = *mine[m];
                    // A span that is not inside its read (it cannot be) reads as nothing, below.
                    let (from, to) = (
                        span.start.saturating_sub(b.start) as usize,
                        span.end.saturating_sub(b.start) as usize,
                    );
                    let Some(record) = bytes.get(from..to) else {
                        errors.push(format!(
                            "bytes {}–{} are no longer in the file",
                            span.start, span.end
                        ));
                        continue;
                    };
                    match LOADED.with(|l| l.borrow_mut().dataset.fill_texts(kind, index, record)) {
                        Ok(()) => FILLED.with(|f| f.borrow_mut().insert((kind_code(kind), index))),
                        Err(e) => {
                            errors.push(e);
                            false
                        }
                    };
                }
            }
        }
        match errors.len() {
            0 => Ok(()),
            n => Err(format!(
                "{n} answer text(s) or rationale(s) could not be read back from the files (did a file change since it was loaded? load it again): {}",
                errors.first().map(String::as_str).unwrap_or_default()
            )),
        }
    }

    /// A message is `[json, [Blob...]]`: the request and, for `add`, the files.
    fn handle(ev: MessageEvent) {
        let data = Array::from(&ev.data());
        let Some(text) = data.get(0).as_string() else {
            return;
        };
        let Ok(req) = serde_json::from_str::<Request>(&text) else {
            return;
        };
        QUEUE.with(|q| q.borrow_mut().push_back((req, data.get(1))));
        if !SERVING.with(|s| s.replace(true)) {
            wasm_bindgen_futures::spawn_local(async {
                while let Some((req, blobs)) = QUEUE.with(|q| q.borrow_mut().pop_front()) {
                    serve(req, blobs).await;
                }
                SERVING.with(|s| s.set(false));
            });
        }
    }

    async fn serve(req: Request, blobs: JsValue) {
        match req {
            Request::Add {
                names,
                origins,
                options,
            } => {
                let blobs = Array::from(&blobs);
                FILES.with(|files| {
                    files.borrow_mut().extend(
                        names
                            .into_iter()
                            .enumerate()
                            .zip(blobs.iter().filter_map(|b| b.dyn_into::<Blob>().ok()))
                            .map(|((i, name), blob)| Held {
                                name,
                                origin: origins.get(i).copied().unwrap_or(Origin::Dropped),
                                blob,
                                hash_tried: false,
                            }),
                    );
                });
                reload(options).await;
                hash_in_background();
            }
            Request::Reload { options } => reload(options).await,
            Request::Score { options } => {
                let (r, pending) = first_report(&options);
                reply(&Response::Report {
                    options: options.clone(),
                    report: r,
                    intervals_pending: pending,
                });
                if pending {
                    send_intervals(options, &mut Phases::start("rp:score-request", false));
                }
            }
            Request::Items { options, model } => {
                let mut items = LOADED.with(|l| {
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
                for i in &mut items {
                    i.per_model.retain(|m, _| Some(m) == model.as_ref());
                }
                reply(&Response::Items {
                    options,
                    model,
                    items,
                });
            }
            Request::Question { id } => {
                let mut phases = Phases::start("rp:question", false);
                let filled = fill_question(&id).await;
                phases.end("rp:texts");
                let mut q = LOADED.with(|l| QuestionData::of(&l.borrow().dataset, &id));
                q.texts_error = filled.err();
                phases.end("rp:question-data");
                reply(&Response::Question(q));
                phases.end("rp:question-reply");
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
