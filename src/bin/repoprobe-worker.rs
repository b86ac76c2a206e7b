//! The site's Web Worker: it owns the loaded dataset and runs `load` and `score` off the main
//! thread, so that a large results file never freezes the page. It speaks `protocol`; what it
//! does is `repoprobe_site::worker` (tested natively); this is the browser glue around it.
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
    use repoprobe_core::trajectories::Scanner;
    use repoprobe_site::protocol::Comparison;
    use repoprobe_site::protocol::{
        GradesOfAnswer, JudgesAnswer, Origin, READY, Request, Response, SearchState, Started,
        StepKind, TrajectoryKey, TrajectoryPage, ViewOptions,
    };
    use repoprobe_site::worker::hash::{Digest, Hasher, hex};
    use repoprobe_site::worker::question::texts_error as texts_error_of;
    use repoprobe_site::worker::trajectory::steps::FIRST_BYTES;
    use repoprobe_site::worker::trajectory::{Source, Work};
    use repoprobe_site::worker::{Worker, grade, judges, scoring};
    use repoprobe_site::worker::{compare, search};
    use std::cell::{Cell, RefCell};
    use std::collections::VecDeque;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{
        Blob, DedicatedWorkerGlobalScope, MessageEvent, ReadableStreamDefaultReader,
        ReadableStreamReadResult,
    };

    thread_local! {
        static WORKER: RefCell<Worker<Blob>> = RefCell::new(Worker::default());
        /// Requests not served yet, in order: serving one may wait for the browser (reading a
        /// file), and the next must not start before it ends (a `Question` after an `Add` must
        /// see the new data).
        static QUEUE: RefCell<VecDeque<(Request, JsValue)>> = const { RefCell::new(VecDeque::new()) };
        static SERVING: Cell<bool> = const { Cell::new(false) };
        /// Whether a task is hashing files (see [`hash_in_background`]).
        static HASHING: Cell<bool> = const { Cell::new(false) };
        /// The search over every run that may go on: a task whose number is no longer this one
        /// stops at its next read (a new search, a stop, new files).
        static SEARCH: Cell<u64> = const { Cell::new(0) };
    }

    fn scope() -> DedicatedWorkerGlobalScope {
        js_sys::global().unchecked_into()
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

    fn reply(r: &Response) {
        let _ = scope().post_message(&JsValue::from_str(&r.encode()));
    }

    /// A message that is not a request: said to the page (which reports it) and on this
    /// worker's console, never dropped silently.
    fn reject(why: String) {
        web_sys::console::error_1(&JsValue::from_str(&why));
        reply(&Response::Rejected(why));
    }

    fn js_err(e: JsValue) -> String {
        e.dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .or_else(|| e.as_string())
            .unwrap_or_else(|| format!("{e:?}"))
    }

    /// The options of the query the worker was started with (its name): those of the first
    /// load, read as the page reads its address.
    fn start_options() -> ViewOptions {
        let params = web_sys::UrlSearchParams::new_with_str(&scope().name()).ok();
        ViewOptions::from_query(|k| params.as_ref().and_then(|p| p.get(k)))
    }

    /// Answers the intervals `scoring::first_report` deferred: the whole report, as a `Report`.
    fn send_intervals(options: ViewOptions, phases: &mut Phases) {
        let report = WORKER.with(|w| scoring::report(w.borrow().loaded(), &options, None));
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

    /// Loads the files that count under `options`, reading each as a stream (see
    /// `Worker::begin_load`), and answers with their tables.
    async fn reload(options: ViewOptions) {
        let mut load = WORKER.with(|w| w.borrow_mut().begin_load(&options));
        let mut phases = Phases::start("rp:start", true);
        let mut times = ReadTimes::default();
        let mut parse = 0.0;
        let begun = phases.now();
        for (name, blob) in load.files.clone() {
            load.loader.begin_file(&name);
            let clock = &phases;
            let loader = &mut load.loader;
            let feed = |chunk: &[u8]| {
                let t = clock.now();
                loader.feed(chunk);
                parse += clock.now() - t;
            };
            let r = stream(&blob, clock, &mut times, feed).await;
            load.loader.end_file();
            if let Err((at, why)) = r {
                load.unread(&name, at, &why);
            }
        }
        phases.end("rp:read+parse");
        phases.total("rp:(wait)", begun, times.wait);
        phases.total("rp:(copy)", begun, times.copy);
        phases.total("rp:(parse)", begun, parse);
        let snapshot = WORKER.with(|w| w.borrow_mut().finish_load(load));
        phases.end("rp:snapshot");
        let (report, pending) =
            WORKER.with(|w| scoring::first_report(w.borrow().loaded(), &options));
        phases.end("rp:score");
        reply(&Response::Loaded {
            options: options.clone(),
            snapshot: Box::new(snapshot),
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
            while let Some((name, blob)) = WORKER.with(|w| w.borrow_mut().next_to_hash()) {
                let mut h = Hasher::new();
                let clock = Phases {
                    perf: None,
                    last: String::new(),
                };
                // A file that cannot be read has no hash; its load says why.
                if stream(&blob, &clock, &mut ReadTimes::default(), |c| h.update(c))
                    .await
                    .is_ok()
                {
                    reply(&Response::Hashes(vec![(name, hex(&h.finalize()))]));
                }
            }
            HASHING.with(|h| h.set(false));
        });
    }

    /// Reads back the texts of question `id`'s records that the load skipped: every slice is
    /// asked for at once (the browser reads them while none is waited on); what could not be
    /// read (a file changed since it was loaded) is in the errors returned.
    async fn fill_question(id: &str) -> Vec<String> {
        let (reads, errors) = WORKER.with(|w| w.borrow().text_reads(id));
        fill_reads(reads, errors).await
    }

    /// Reads `reads` (every slice asked for at once) and puts their texts back; `errors` and
    /// what could not be read, returned.
    async fn fill_reads(
        reads: Vec<repoprobe_site::worker::question::TextReads<Blob>>,
        mut errors: Vec<String>,
    ) -> Vec<String> {
        for file in reads {
            let blob = gloo_file::Blob::from(file.blob);
            let pending: Vec<_> = file
                .batches
                .iter()
                .map(|(b, _)| gloo_file::futures::read_as_bytes(&blob.slice(b.start, b.end)))
                .collect();
            for ((batch, wanted), read) in file.batches.iter().zip(pending) {
                match read.await {
                    Ok(bytes) => WORKER.with(|w| {
                        w.borrow_mut()
                            .fill(batch.start, wanted, &bytes, &mut errors)
                    }),
                    Err(e) => errors.push(e.to_string()),
                }
            }
        }
        errors
    }

    /// The agreement between judges A and B (every judge where `None`), the rationales of the
    /// disagreements shown read back first (the load skipped them); the report computed again
    /// with them, every figure the same.
    async fn judges(options: ViewOptions, a: Option<String>, b: Option<String>) {
        let mut phases = Phases::start("rp:judges", false);
        let first =
            WORKER.with(|w| judges::report(&w.borrow().loaded().dataset, a.clone(), b.clone()));
        let mut texts_error = None;
        let report = match first {
            Ok(r) => {
                let (reads, errors) = WORKER.with(|w| w.borrow().judges_reads(&r));
                let read_any = !reads.is_empty();
                let errors = fill_reads(reads, errors).await;
                phases.end("rp:judges-texts");
                texts_error = texts_error_of(&errors);
                if read_any {
                    WORKER.with(|w| {
                        judges::report(&w.borrow().loaded().dataset, a.clone(), b.clone())
                    })
                } else {
                    Ok(r)
                }
            }
            Err(e) => Err(e),
        };
        phases.end("rp:judges");
        reply(&Response::Judges(Box::new(JudgesAnswer {
            options,
            a,
            b,
            report,
            texts_error,
        })));
    }

    /// The grades in `judge`'s run-0 judgments (a grader's file loaded), their rationales read
    /// back first (the load skipped them).
    async fn grades_of(options: ViewOptions, judge: String) {
        let (reads, errors) = WORKER.with(|w| w.borrow().grade_reads(&judge));
        let errors = fill_reads(reads, errors).await;
        let grades = WORKER.with(|w| {
            repoprobe_core::grading::grades_of(&w.borrow().loaded().dataset.judgments, &judge)
        });
        reply(&Response::GradesOf(Box::new(GradesOfAnswer {
            options,
            judge,
            grades: grades.into_iter().collect(),
            texts_error: texts_error_of(&errors),
        })));
    }

    /// A message is `[json, [Blob...]]`: the request and, for `add` and `started`, the files.
    fn handle(ev: &MessageEvent) {
        let data = ev.data();
        let Some(text) = data.dyn_ref::<Array>().and_then(|d| d.get(0).as_string()) else {
            return reject(format!(
                "the worker got a message that is not [request, files]: {:?}",
                data.as_string().unwrap_or_else(|| format!("{data:?}"))
            ));
        };
        let req = match Request::decode(&text) {
            Ok(req) => req,
            Err(e) => return reject(e.to_string()),
        };
        let blobs = Array::from(&data).get(1);
        QUEUE.with(|q| q.borrow_mut().push_back((req, blobs)));
        if !SERVING.with(|s| s.replace(true)) {
            wasm_bindgen_futures::spawn_local(async {
                while let Some((req, blobs)) = QUEUE.with(|q| q.borrow_mut().pop_front()) {
                    serve(req, blobs).await;
                }
                SERVING.with(|s| s.set(false));
            });
        }
    }

    /// Starts a search over every step of every run held, as a task of its own (the queue
    /// goes on serving: the Runs table is asked for as hits come): a batch of lines read at a
    /// time, a `Search` message after each, the last `done`.
    fn start_search(id: u64, query: String, regex: bool) {
        let n = SEARCH.with(|g| {
            g.set(g.get() + 1);
            g.get()
        });
        let mut state = SearchState {
            id,
            query: query.clone(),
            regex,
            ..SearchState::default()
        };
        let matcher = match search::Matcher::new(&query, regex) {
            Ok(m) => m,
            Err(why) => {
                state.done = true;
                state.errors.push(why);
                return reply(&Response::Search(state));
            }
        };
        let batches = WORKER.with(|w| {
            let mut w = w.borrow_mut();
            w.search = Some((query.clone(), regex, search::Found::default()));
            w.trajectories.batches(search::BATCH_BYTES)
        });
        state.bytes = batches.iter().map(|b| b.length).sum();
        state.runs = batches.iter().map(|b| b.lines.len()).sum();
        wasm_bindgen_futures::spawn_local(async move {
            let mut phases = Phases::start("rp:search", false);
            for b in batches {
                if SEARCH.with(Cell::get) != n {
                    // Stopped, or another search or new files: the page knows.
                    return;
                }
                let read = read_range(b.source.clone(), b.offset, b.length).await;
                let (hits, runs_hit, errors) = WORKER.with(|w| {
                    let mut w = w.borrow_mut();
                    let Some((_, _, found)) = w.search.as_mut() else {
                        return (Vec::new(), 0, Vec::new());
                    };
                    let (listed, errors) = (found.hits.len(), found.errors.len());
                    match &read {
                        Ok(bytes) => search::search_batch(&b, bytes, &matcher, found),
                        Err(e) => found.errors.push(format!("{}: {e}", b.file)),
                    }
                    (
                        found.hits[listed..].to_vec(),
                        found.runs.len(),
                        found.errors[errors..].to_vec(),
                    )
                });
                if SEARCH.with(Cell::get) != n {
                    return;
                }
                state.bytes_read += b.length;
                state.runs_read += b.lines.len();
                state.runs_hit = runs_hit;
                state.hits = hits;
                state.errors = errors;
                reply(&Response::Search(state.clone()));
            }
            phases.end("rp:search");
            state.done = true;
            state.hits.clear();
            state.errors.clear();
            reply(&Response::Search(state));
        });
    }

    /// Two runs of question `id` side by side: each one's line read (by slice or range) and
    /// laid out by `worker::compare`; one that cannot be read says why beside the other.
    async fn compare(id: String, a: (String, u32), b: (String, u32)) {
        let evidence: std::collections::BTreeSet<String> = WORKER.with(|w| {
            w.borrow()
                .loaded()
                .dataset
                .question(&id)
                .map(|q| {
                    q.checklist
                        .iter()
                        .flat_map(|c| c.evidence.iter().map(|e| e.path.clone()))
                        .collect()
                })
                .unwrap_or_default()
        });
        let mut sides = Vec::new();
        for (model, attempt) in [a, b] {
            let key = TrajectoryKey {
                question_id: id.clone(),
                model,
                attempt,
            };
            let side = async {
                let at = WORKER
                    .with(|w| w.borrow().trajectories.find(&key))
                    .ok_or_else(|| "no trajectories file given holds this run".to_string())?;
                let bytes = read_range(at.source, at.offset, at.length).await?;
                let (_, t) = repoprobe_core::trajectories::read_line(&bytes)?;
                Ok(compare::side(key.clone(), &t, &evidence))
            }
            .await;
            sides.push(side);
        }
        let (mut b, mut a) = (
            sides.pop().unwrap_or(Err(String::new())),
            sides.pop().unwrap_or(Err(String::new())),
        );
        if let (Ok(a), Ok(b)) = (a.as_mut(), b.as_mut()) {
            compare::only(a, b);
        }
        reply(&Response::Compare(Box::new(Comparison {
            id,
            evidence: evidence.into_iter().collect(),
            a,
            b,
        })));
    }

    /// Adds files and loads them all again with those held (trajectories files are indexed
    /// first, so that the snapshot says how).
    async fn add(names: Vec<String>, origins: &[Origin], blobs: JsValue, options: ViewOptions) {
        let blobs: Vec<Blob> = Array::from(&blobs)
            .iter()
            .filter_map(|b| b.dyn_into::<Blob>().ok())
            .collect();
        SEARCH.with(|g| g.set(g.get() + 1));
        WORKER.with(|w| w.borrow_mut().add(names, origins, blobs));
        index_trajectories().await;
        read_releases().await;
        reload(options).await;
        hash_in_background();
    }

    /// Reads the release manifests not read yet, each whole (the store refuses any too large).
    async fn read_releases() {
        let files = WORKER.with(|w| w.borrow_mut().releases.to_read());
        for (name, blob) in files {
            let bytes = gloo_file::futures::read_as_bytes(&gloo_file::Blob::from(blob))
                .await
                .map_err(|e| e.to_string());
            WORKER.with(|w| w.borrow_mut().releases.read(&name, bytes));
        }
    }

    /// Indexes the trajectories files not indexed yet: their index read (small), or, without
    /// one, their line heads scanned as a stream (the trajectories themselves never kept).
    async fn index_trajectories() {
        let work = WORKER.with(|w| w.borrow_mut().trajectories.work());
        for job in work {
            let mut phases = Phases::start("rp:trajectories-index", false);
            match job {
                Work::ReadIndex { file, index } => {
                    let json = gloo_file::futures::read_as_bytes(&gloo_file::Blob::from(index))
                        .await
                        .map_err(|e| e.to_string());
                    WORKER.with(|w| w.borrow_mut().trajectories.index_read(&file, json));
                    phases.end("rp:trajectories-index-read");
                }
                Work::Scan { file, blob } => {
                    let mut scan = Scanner::new();
                    let t0 = phases.now();
                    let r =
                        stream(&blob, &phases, &mut ReadTimes::default(), |c| scan.feed(c)).await;
                    let ms = phases.now() - t0;
                    let unread = r.err().map(|(_, why)| why);
                    WORKER.with(|w| w.borrow_mut().trajectories.scanned(&file, scan, ms, unread));
                    phases.end("rp:trajectories-scan");
                }
            }
        }
    }

    /// The bytes `offset..offset+length` of a trajectories file: a `Blob` slice, or an HTTP
    /// Range request to its URL (which must answer 206: the start script checked it does).
    async fn read_range(source: Source<Blob>, offset: u64, length: u64) -> Result<Vec<u8>, String> {
        match source {
            Source::Blob(b) => {
                let slice = gloo_file::Blob::from(b).slice(offset, offset + length);
                gloo_file::futures::read_as_bytes(&slice)
                    .await
                    .map_err(|e| e.to_string())
            }
            Source::Url(url) => {
                let headers = js_sys::Object::new();
                let range = format!("bytes={offset}-{}", (offset + length).saturating_sub(1));
                let _ = js_sys::Reflect::set(&headers, &"Range".into(), &range.into());
                let init = web_sys::RequestInit::new();
                init.set_headers(&headers);
                let req = web_sys::Request::new_with_str_and_init(&url, &init).map_err(js_err)?;
                let resp: web_sys::Response = JsFuture::from(scope().fetch_with_request(&req))
                    .await
                    .map_err(|e| format!("the browser could not fetch it: {}", js_err(e)))?
                    .unchecked_into();
                if resp.status() != 206 {
                    return Err(format!(
                        "the server answered HTTP {} to a Range request (206 expected): load the page again to download the file whole",
                        resp.status()
                    ));
                }
                let buf = JsFuture::from(resp.array_buffer().map_err(js_err)?)
                    .await
                    .map_err(js_err)?;
                let bytes = Uint8Array::new(&buf).to_vec();
                if bytes.len() as u64 != length {
                    return Err(format!(
                        "the server sent {} bytes for a range of {length}",
                        bytes.len()
                    ));
                }
                Ok(bytes)
            }
        }
    }

    /// A page of run `key`'s steps: its line read by range and parsed when it is not the run
    /// held (then its outline comes too), the search texts made after the answer is out.
    async fn trajectory_page(
        key: TrajectoryKey,
        from: u64,
        kinds: Vec<StepKind>,
        count: usize,
        head: bool,
    ) {
        let mut phases = Phases::start("rp:trajectory", false);
        let held = WORKER.with(|w| w.borrow().trajectories.held(&key).is_some());
        let mut opened = false;
        let page: Result<TrajectoryPage, String> = async {
            if !held {
                let at = WORKER
                    .with(|w| w.borrow().trajectories.find(&key))
                    .ok_or_else(|| "no trajectories file given holds this run".to_string())?;
                // A long line: its first page from its first bytes, while the rest is read.
                if at.length > FIRST_BYTES
                    && let Ok(first) = read_range(at.source.clone(), at.offset, FIRST_BYTES).await
                    && let Some(page) = WORKER.with(|w| {
                        w.borrow()
                            .trajectories
                            .preview(&key, &at.file, &first, from, &kinds, count)
                    })
                {
                    reply(&Response::Trajectory {
                        key: key.clone(),
                        page: Ok(page),
                    });
                    phases.end("rp:trajectory-first-page");
                }
                let bytes = read_range(at.source, at.offset, at.length).await?;
                phases.end("rp:trajectory-read");
                WORKER.with(|w| w.borrow_mut().trajectories.open(&key, &at.file, &bytes))?;
                phases.end("rp:trajectory-parse");
                opened = true;
            }
            WORKER.with(|w| {
                w.borrow()
                    .trajectories
                    .held(&key)
                    .map(|h| h.page(from, &kinds, count, head || opened))
                    .ok_or_else(|| "the run is no longer held".to_string())
            })
        }
        .await;
        phases.end("rp:trajectory-page");
        reply(&Response::Trajectory {
            key: key.clone(),
            page,
        });
        phases.end("rp:trajectory-reply");
        if opened {
            WORKER.with(|w| {
                if let Some(h) = w.borrow_mut().trajectories.held_mut(&key) {
                    h.prepare_search();
                }
            });
            phases.end("rp:trajectory-search-texts");
        }
    }

    /// The start script's files: a trajectories file read by Range requests kept as its URL
    /// (its Blob is a stand-in), the others loaded.
    async fn started(s: Started, blobs: JsValue) {
        // A trajectories file read by Range requests: its Blob is a stand-in.
        WORKER.with(|w| {
            let mut w = w.borrow_mut();
            for f in &s.files {
                match (&f.ranged, &f.note) {
                    (Some(url), note) => {
                        w.trajectories
                            .add_ranged(&f.name, url, f.size as u64, note.clone())
                    }
                    // Downloaded whole instead (no Range support, no index): said.
                    (None, Some(note)) => w.trajectories.note(&f.name, note),
                    (None, None) => {}
                }
            }
        });
        let blobs = Array::from(&blobs);
        let (mut names, mut origins, kept) = (Vec::new(), Vec::new(), Array::new());
        for (i, f) in s.files.iter().enumerate() {
            if f.ranged.is_none() {
                names.push(f.name.clone());
                origins.push(f.origin);
                kept.push(&blobs.get(i as u32));
            }
        }
        if !s.files.is_empty() {
            add(names, &origins, kept.into(), start_options()).await;
        }
    }

    async fn serve(req: Request, blobs: JsValue) {
        match req {
            Request::Started(s) => started(s, blobs).await,
            Request::Add {
                names,
                origins,
                options,
            } => add(names, &origins, blobs, options).await,
            Request::Reload { options } => reload(options).await,
            Request::Score { options } => {
                let (r, pending) =
                    WORKER.with(|w| scoring::first_report(w.borrow().loaded(), &options));
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
                let items =
                    WORKER.with(|w| scoring::items(w.borrow().loaded(), &options, model.as_ref()));
                reply(&Response::Items {
                    options,
                    model,
                    items,
                });
            }
            Request::Question { id } => {
                let mut phases = Phases::start("rp:question", false);
                let errors = fill_question(&id).await;
                phases.end("rp:texts");
                let q = WORKER.with(|w| w.borrow().question(&id, &errors));
                phases.end("rp:question-data");
                reply(&Response::Question(q));
                phases.end("rp:question-reply");
            }
            Request::Trajectory {
                key,
                from,
                kinds,
                count,
                head,
            } => trajectory_page(key, from, kinds, count, head).await,
            Request::TrajectorySearch { key, query } => {
                let mut phases = Phases::start("rp:trajectory-search", false);
                let steps = WORKER.with(|w| {
                    w.borrow_mut()
                        .trajectories
                        .held_mut(&key)
                        .map(|h| h.search(&query))
                        .ok_or_else(|| "the run is no longer held: open it again".to_string())
                });
                phases.end("rp:trajectory-search");
                reply(&Response::TrajectorySearch { key, query, steps });
            }
            Request::Runs { options, query } => {
                let mut phases = Phases::start("rp:runs", false);
                let page = WORKER.with(|w| w.borrow_mut().runs(&options, &query));
                phases.end("rp:runs");
                reply(&Response::Runs {
                    options,
                    query,
                    page,
                });
            }
            Request::Search { id, query, regex } => start_search(id, query, regex),
            Request::Compare { id, a, b } => compare(id, a, b).await,
            Request::StopSearch => {
                SEARCH.with(|g| g.set(g.get() + 1));
            }
            Request::Judges { options, a, b } => judges(options, a, b).await,
            Request::Grade {
                options,
                judge,
                sample,
            } => {
                let answer = WORKER
                    .with(|w| grade::answer(&w.borrow().loaded().dataset, options, judge, sample));
                reply(&Response::Grade(Box::new(answer)));
            }
            Request::GradesOf { options, judge } => grades_of(options, judge).await,
            Request::Paired { options, a, b } => {
                let report =
                    WORKER.with(|w| scoring::paired(w.borrow().loaded(), &options, &a, &b));
                reply(&Response::Paired {
                    options,
                    a,
                    b,
                    report,
                });
            }
        }
    }
}
