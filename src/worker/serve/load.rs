//! Files given and loaded: the start script's (`started`), dropped and picked ones (`add`),
//! a load of those that count (`reload`, each file streamed into the loader), trajectories files
//! indexed, release manifests read, and the hashes (`hash_in_background`).

use super::Service;
use crate::protocol::{Origin, Response, Started, ViewOptions};
use crate::worker::hash::{Digest, Hasher, hex};
use crate::worker::host::{Host, Phases, ReadTimes};
use crate::worker::scoring;
use crate::worker::trajectory::Work;
use repoprobe_core::trajectories::Scanner;
use std::rc::Rc;

impl<H: Host> Service<H> {
    /// The start script's files (`blobs` by position): a trajectories file read by Range
    /// requests kept as its URL (its Blob is a stand-in), the others loaded with the options of
    /// the worker's start.
    pub(super) async fn started(self: Rc<Self>, s: Started, blobs: super::Files<H>) {
        {
            let mut w = self.worker.borrow_mut();
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
        }
        let (mut names, mut origins, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        for (i, f) in s.files.iter().enumerate() {
            if f.ranged.is_none() {
                names.push(f.name.clone());
                origins.push(f.origin);
                kept.extend(blobs.get(i).cloned().flatten());
            }
        }
        if !s.files.is_empty() {
            let options = self.host.start_options();
            self.add(names, &origins, kept, options).await;
        }
    }

    /// Adds files and loads them all again with those held (trajectories files are indexed
    /// first, so that the snapshot says how); a search under way stops.
    pub(super) async fn add(
        self: Rc<Self>,
        names: Vec<String>,
        origins: &[Origin],
        blobs: Vec<H::Blob>,
        options: ViewOptions,
    ) {
        self.stop_search();
        self.worker.borrow_mut().add(names, origins, blobs);
        self.index_trajectories().await;
        self.read_releases().await;
        self.reload(options).await;
        self.hash_in_background();
    }

    /// Loads the files that count under `options`, reading each as a stream (see
    /// `Worker::begin_load`), and answers with their tables (the intervals after them when
    /// `scoring::first_report` defers them).
    pub(super) async fn reload(&self, options: ViewOptions) {
        let mut load = self.worker.borrow_mut().begin_load(&options);
        let mut phases = Phases::start(&self.host, "rp:start", true);
        let mut times = ReadTimes::default();
        let mut parse = 0.0;
        let begun = phases.now();
        for (name, blob) in load.files.clone() {
            load.loader.begin_file(&name);
            let clock = &phases;
            let loader = &mut load.loader;
            let mut feed = |chunk: &[u8]| {
                let t = clock.now();
                loader.feed(chunk);
                parse += clock.now() - t;
            };
            let r = self.host.stream(&blob, &mut times, &mut feed).await;
            load.loader.end_file();
            if let Err(stopped) = r {
                load.unread(&name, &stopped);
            }
        }
        phases.end("rp:read+parse");
        phases.total("rp:(wait)", begun, times.wait);
        phases.total("rp:(copy)", begun, times.copy);
        phases.total("rp:(parse)", begun, parse);
        let snapshot = self.worker.borrow_mut().finish_load(load);
        phases.end("rp:snapshot");
        let (report, pending) = scoring::first_report(self.worker.borrow().loaded(), &options);
        phases.end("rp:score");
        self.reply(&Response::Loaded {
            options: options.clone(),
            snapshot: Box::new(snapshot),
            report,
            intervals_pending: pending,
        });
        phases.end("rp:reply");
        if pending {
            self.send_intervals(options, &mut phases);
        }
    }

    /// Hashes every file not hashed yet, in a task of its own, answering each hash as it is
    /// known: hashing runs at ~100 MB/s in wasm, so it must neither hold back the tables (it
    /// runs after the load that reads the files) nor the requests that come meanwhile (they are
    /// served between the chunks it reads). One such task at a time; it picks up files added
    /// while it runs.
    pub(super) fn hash_in_background(self: Rc<Self>) {
        if self.hashing.replace(true) {
            return;
        }
        let me = Rc::clone(&self);
        self.host.spawn(async move {
            loop {
                let next = me.worker.borrow_mut().next_to_hash();
                let Some((name, blob)) = next else { break };
                let mut h = Hasher::new();
                let mut update = |c: &[u8]| h.update(c);
                let mut times = ReadTimes::default();
                let read = me.host.stream(&blob, &mut times, &mut update).await;
                // A file that cannot be read has no hash; its load says why.
                if read.is_ok() {
                    me.reply(&Response::Hashes(vec![(name, hex(&h.finalize()))]));
                }
            }
            me.hashing.set(false);
        });
    }

    /// Reads the release manifests not read yet, each whole (the store refuses any too large).
    async fn read_releases(&self) {
        let files = self.worker.borrow_mut().releases.to_read();
        for (name, blob) in files {
            let bytes = self.host.read_all(&blob).await;
            self.worker.borrow_mut().releases.read(&name, bytes);
        }
    }

    /// Indexes the trajectories files not indexed yet: their index read (small), or, without
    /// one, their line heads scanned as a stream (the trajectories themselves never kept).
    async fn index_trajectories(&self) {
        let work = self.worker.borrow_mut().trajectories.work();
        for job in work {
            let mut phases = Phases::start(&self.host, "rp:trajectories-index", false);
            match job {
                Work::ReadIndex { file, index } => {
                    let json = self.host.read_all(&index).await;
                    self.worker
                        .borrow_mut()
                        .trajectories
                        .index_read(&file, json);
                    phases.end("rp:trajectories-index-read");
                }
                Work::Scan { file, blob } => {
                    let mut scan = Scanner::new();
                    let t0 = phases.now();
                    let mut feed = |c: &[u8]| scan.feed(c);
                    let r = self
                        .host
                        .stream(&blob, &mut ReadTimes::default(), &mut feed)
                        .await;
                    let ms = phases.now() - t0;
                    let unread = r.err().map(|s| s.error);
                    self.worker
                        .borrow_mut()
                        .trajectories
                        .scanned(&file, scan, ms, unread);
                    phases.end("rp:trajectories-scan");
                }
            }
        }
    }
}
