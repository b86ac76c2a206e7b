//! [`RecordStream`]: files given chunk by chunk, as they are read. Each file's splitter cuts its
//! records into batches; a full batch is parsed — here, or with the `parallel` feature on a few
//! threads of our own — and the results are put back in input order, so that a load gives the
//! same records, issues and numbers however its files were chunked or its batches scheduled.
//! The parsed records are handed, as they come, to whatever assembles them (an [`Assemble`];
//! with `parallel`, on a thread of its own), not kept until after the last batch. The loader
//! never knows what they are assembled into: that is the layer above's (the public
//! `StreamLoader` over this stream).
//!
//! Memory: the batches in flight (a quarter of a megabyte each), the parsed records waiting to
//! be assembled and the dataset; never a whole
//! file (but for a file that is one JSON object which is not a container, kept whole to be
//! parsed as one value).

use super::split::{CutBatch, Output, Splitter};
use super::{FileSummary, LoadOptions, Parsed, Records, Segment, parse_batch};
use crate::Issue;

/// A batch is handed on to be parsed once it holds this many bytes of records. Small enough
/// that the batches in flight (one being cut, one waiting and one being parsed per thread) add
/// little to the memory of a load, and that a batch's vectors of parsed records stay under the
/// CLI's 64 KiB mmap threshold (they come from the parsing threads' heaps and are used again
/// once assembled, rather than mapped and faulted in afresh: 256 KiB instead of 512 KiB cost
/// 2 k page faults fewer on the 72.9 MB file); large enough that handing them on costs nothing.
const BATCH_BYTES: usize = 256 << 10;

/// Parsed parts that may wait for the assembler thread (each a batch's records).
#[cfg(feature = "parallel")]
const PARTS_WAITING: usize = 16;

/// What takes the parsed records as they come, part by part in input order, while later parts
/// are still being read: the seam between reading records and assembling them, so that the
/// loader hands parts on without naming what they become.
pub(crate) trait Assemble: Send + 'static {
    /// A fresh assembler that can give back what it took ([`Assemble::undo`]).
    fn start(options: LoadOptions) -> Self;

    /// True when taking `part` after records of the kinds `taken` (by
    /// [`RecordKind`](super::RecordKind) order) could give another result than taking every part
    /// kind by kind at the end: the stream then stops assembling as records come.
    fn would_differ(taken: [bool; super::record::KINDS], part: &Records) -> bool;

    /// Takes the next part (in input order) of file number `file`, called `name` in issues.
    fn add(&mut self, file: usize, name: &str, part: Records);

    /// Gives back every record taken, as the parts they came in (file, records), in order.
    fn undo(self) -> Vec<(usize, Records)>;
}

/// Files read chunk by chunk into parsed records, handed to an `A` as they come (see the
/// module docs); [`RecordStream::finish`] says how far the assembling got.
pub(crate) struct RecordStream<A> {
    files: Vec<FileSummary>,
    splitter: Option<Splitter>,
    out: Out<A>,
}

/// Where a [`RecordStream`] ended.
pub(crate) enum Finished<A> {
    /// Every record was taken by the assembler as it came; the parse's issues and what each
    /// file held go with it.
    Assembled(A, Vec<Issue>, Vec<FileSummary>),
    /// Assembling as records came was given up (or never started): every record, parsed, to be
    /// assembled kind by kind.
    Parsed(Parsed),
}

/// The splitters' output: the batch being filled, and where full batches go.
struct Out<A> {
    batch: CutBatch,
    /// Parsed batches' buffers, emptied, to be filled again (no fresh buffer to allocate
    /// and fault in for every batch).
    spare: Vec<CutBatch>,
    options: LoadOptions,
    merge: Merge<A>,
    #[cfg(feature = "parallel")]
    pool: Option<pool::Pool>,
}

impl<A: Assemble> Output for Out<A> {
    fn batch(&mut self) -> &mut CutBatch {
        &mut self.batch
    }

    fn unit_done(&mut self) {
        if self.batch.buf.len() >= BATCH_BYTES {
            self.dispatch();
        }
    }
}

impl<A: Assemble> Out<A> {
    fn dispatch(&mut self) {
        if self.batch.units.is_empty() {
            return;
        }
        let fresh = self
            .spare
            .pop()
            .unwrap_or_else(|| CutBatch::with_capacity(BATCH_BYTES));
        let batch = std::mem::replace(&mut self.batch, fresh);
        #[cfg(feature = "parallel")]
        if let Some(pool) = self.pool.as_mut() {
            let (done, spare) = pool.send(batch);
            for segments in done {
                self.merge.add(segments);
            }
            self.recycle(spare);
            return;
        }
        let segments = parse_batch(&batch, self.options);
        self.recycle(Some(batch));
        self.merge.add(segments);
    }

    /// Keeps a parsed batch's buffers for a next batch, unless a large record made them grow.
    fn recycle(&mut self, batch: Option<CutBatch>) {
        if let Some(mut b) = batch
            && b.buf.capacity() <= 2 * BATCH_BYTES
        {
            b.buf.clear();
            b.units.clear();
            self.spare.push(b);
        }
    }
}

impl<A: Assemble> RecordStream<A> {
    pub(crate) fn new(options: LoadOptions) -> Self {
        RecordStream {
            files: Vec::new(),
            splitter: None,
            out: Out {
                batch: CutBatch::with_capacity(BATCH_BYTES),
                spare: Vec::new(),
                options,
                merge: Merge {
                    records: Vec::new(),
                    issues: Vec::new(),
                    names: Vec::new(),
                    files: Vec::new(),
                    asm: Some(Assembling::new(options)),
                    kinds: [false; super::record::KINDS],
                    taken: Vec::new(),
                },
                #[cfg(feature = "parallel")]
                pool: (options.threads > 1)
                    .then(|| pool::Pool::new(options.threads, options))
                    .flatten(),
            },
        }
    }

    /// Starts the next file (ending the one before, if still open). Issues name it `name`;
    /// its records' [`crate::Span`]s carry its number: how many files were begun before it.
    pub(crate) fn begin_file(&mut self, name: &str) {
        self.end_file();
        self.out.merge.names.push(name.to_string());
        self.files.push(FileSummary {
            name: name.to_string(),
            ..FileSummary::default()
        });
        self.splitter = Some(Splitter::new(self.files.len() - 1));
    }

    /// The file's next bytes. A chunk may end anywhere, even inside a UTF-8 character.
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        if self.splitter.is_none() {
            self.begin_file("input");
        }
        if let Some(s) = self.splitter.as_mut() {
            s.feed(chunk, &mut self.out);
        }
    }

    /// The file has no more bytes.
    pub(crate) fn end_file(&mut self) {
        let Some(mut s) = self.splitter.take() else {
            return;
        };
        s.finish(&mut self.out);
        if let Some(f) = self.files.last_mut() {
            f.shape = s.shape().to_string();
            f.bytes = usize::try_from(s.bytes()).unwrap_or(usize::MAX);
            f.meta = s.take_meta();
        }
    }

    /// Every file ended and every batch parsed: the assembler with every record, or, when it
    /// was given up, the records as parsed.
    pub(crate) fn finish(mut self) -> Finished<A> {
        self.drain();
        match self.out.merge.asm.take() {
            Some(asm) => {
                let asm = asm.into_inner();
                let (_, issues, files) = self.summary();
                Finished::Assembled(asm, issues, files)
            }
            None => Finished::Parsed(self.parsed()),
        }
    }

    /// Every file ended, every batch parsed and merged.
    fn drain(&mut self) {
        self.end_file();
        self.out.dispatch();
        #[cfg(feature = "parallel")]
        if let Some(pool) = self.out.pool.take() {
            for segments in pool.finish() {
                self.out.merge.add(segments);
            }
        }
    }

    /// Every record of every file as parsed, in input order, not yet assembled.
    pub(crate) fn parsed(mut self) -> Parsed {
        self.drain();
        self.out.merge.give_back();
        let (records, issues, files) = self.summary();
        Parsed {
            records,
            issues,
            files,
        }
    }

    /// The records not taken by the assembler, the issues and what each file held.
    fn summary(self) -> (Vec<Records>, Vec<Issue>, Vec<FileSummary>) {
        let Merge {
            records,
            issues,
            files: states,
            taken: mut counts,
            ..
        } = self.out.merge;
        let mut files = self.files;
        counts.resize(files.len(), 0);
        let records: Vec<Records> = records.into_iter().map(|(_, r)| r).collect();
        for r in &records {
            r.count_files(&mut counts);
        }
        for (f, n) in files.iter_mut().zip(counts) {
            f.records = n;
        }
        for (f, state) in files.iter_mut().zip(states) {
            if let Some((shape, meta)) = state.whole {
                f.shape = shape.to_string();
                f.meta = meta;
            }
        }
        (records, issues, files)
    }
}

/// The parsed batches put together in input order.
struct Merge<A> {
    /// Each segment's records, with its file, when not taken by `asm`.
    records: Vec<(usize, Records)>,
    issues: Vec<Issue>,
    names: Vec<String>,
    files: Vec<FileState>,
    /// Assembles the records as they come, until a part would make it differ from assembling
    /// them all at the end (it then gives back what it took and is dropped).
    asm: Option<Assembling<A>>,
    /// The kinds (by [`super::RecordKind`] order) of the records handed to `asm`.
    kinds: [bool; super::record::KINDS],
    /// Records per file handed to `asm`.
    taken: Vec<usize>,
}

/// The assembler of records as they come: here, or (`parallel` feature) on a thread of its own,
/// beside the reading and parsing threads, the parts sent to it in order.
enum Assembling<A> {
    Here(Box<A>),
    #[cfg(feature = "parallel")]
    Thread(
        std::sync::mpsc::SyncSender<(usize, String, Records)>,
        std::thread::JoinHandle<A>,
    ),
}

impl<A: Assemble> Assembling<A> {
    fn new(options: LoadOptions) -> Self {
        #[cfg(feature = "parallel")]
        if options.threads > 1 {
            // A few parts may wait (the assembler is the quicker side); more would hold parsed
            // records in memory while a busy machine holds the assembler back.
            let (parts, queue) =
                std::sync::mpsc::sync_channel::<(usize, String, Records)>(PARTS_WAITING);
            let thread = std::thread::Builder::new()
                .name("repoprobe-assemble".into())
                .spawn(move || {
                    let mut asm = A::start(options);
                    for (file, name, part) in queue {
                        asm.add(file, &name, part);
                    }
                    asm
                });
            if let Ok(thread) = thread {
                return Assembling::Thread(parts, thread);
            }
        }
        Assembling::Here(Box::new(A::start(options)))
    }

    fn add(&mut self, file: usize, name: &str, part: Records) {
        match self {
            Assembling::Here(asm) => asm.add(file, name, part),
            #[cfg(feature = "parallel")]
            Assembling::Thread(parts, _) => {
                // The thread ends only when the sender is dropped (or it panicked: then joining
                // it says so).
                let _ = parts.send((file, name.to_string(), part));
            }
        }
    }

    /// The assembler, with every part sent taken.
    fn into_inner(self) -> A {
        match self {
            Assembling::Here(asm) => *asm,
            #[cfg(feature = "parallel")]
            Assembling::Thread(parts, thread) => {
                drop(parts);
                thread
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            }
        }
    }
}

#[derive(Default)]
struct FileState {
    /// Where the file's issues start.
    issues_from: usize,
    /// Nothing more of the file counts.
    dead: bool,
    whole: Option<(&'static str, Option<serde_json::Value>)>,
}

impl<A: Assemble> Merge<A> {
    /// Adds the segments of the next batch (batches come in input order).
    fn add(&mut self, segments: Vec<Segment>) {
        for seg in segments {
            while self.files.len() <= seg.file {
                self.files.push(FileState {
                    issues_from: self.issues.len(),
                    ..FileState::default()
                });
            }
            if seg.void && self.kinds.contains(&true) {
                self.give_back();
            }
            let state = &mut self.files[seg.file];
            if seg.void {
                // The file's parts are the last ones.
                while self.records.last().is_some_and(|(f, _)| *f == seg.file) {
                    self.records.pop();
                }
                self.issues.truncate(state.issues_from);
            } else if state.dead {
                continue;
            }
            state.dead |= seg.fatal;
            if seg.whole.is_some() {
                state.whole = seg.whole;
            }
            let name = self.names.get(seg.file).cloned().unwrap_or_default();
            if !seg.records.is_empty() {
                if A::would_differ(self.kinds, &seg.records) {
                    self.give_back();
                }
                match self.asm.as_mut() {
                    Some(asm) => {
                        if self.taken.len() <= seg.file {
                            self.taken.resize(seg.file + 1, 0);
                        }
                        seg.records.count_files(&mut self.taken);
                        for (k, n) in self.kinds.iter_mut().zip(seg.records.lens()) {
                            *k |= n > 0;
                        }
                        asm.add(seg.file, &name, seg.records);
                    }
                    None => self.records.push((seg.file, seg.records)),
                }
            }
            self.issues.extend(seg.issues.into_iter().map(|mut i| {
                i.file.clone_from(&name);
                i
            }));
        }
    }
}

impl<A: Assemble> Merge<A> {
    /// Stops assembling as records come: what was taken goes back into `records`, to be
    /// assembled kind by kind at the end.
    fn give_back(&mut self) {
        if let Some(asm) = self.asm.take() {
            let mut parts = asm.into_inner().undo();
            parts.append(&mut self.records);
            self.records = parts;
            self.taken.clear();
            self.kinds = [false; super::record::KINDS];
        }
    }
}

/// Threads of our own that parse batches: the splitter runs on the caller's thread, the parses
/// on these, and results come back in the order the batches were sent.
#[cfg(feature = "parallel")]
mod pool {
    use super::super::LoadOptions;
    use super::super::Segment;
    use super::super::parse_batch;
    use super::super::split::CutBatch;
    use std::collections::BTreeMap;
    use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;

    pub(super) struct Pool {
        jobs: Option<SyncSender<(usize, CutBatch)>>,
        done: Receiver<(usize, Vec<Segment>, CutBatch)>,
        workers: Vec<JoinHandle<()>>,
        options: LoadOptions,
        sent: usize,
        next: usize,
        ready: BTreeMap<usize, Vec<Segment>>,
        /// Parsed batches, for their buffers to be used again.
        spare: Vec<CutBatch>,
    }

    impl Pool {
        /// `None` when no thread could be started: batches are then parsed by the caller.
        pub(super) fn new(threads: usize, options: LoadOptions) -> Option<Pool> {
            // One batch waiting per thread keeps every thread busy (the caller's thread, which
            // cuts the batches, is the slower side); more would only hold memory.
            let (jobs, queue) = sync_channel::<(usize, CutBatch)>(threads);
            let queue = Arc::new(Mutex::new(queue));
            let (done_tx, done) = channel();
            let mut workers = Vec::new();
            for _ in 0..threads {
                let queue = Arc::clone(&queue);
                let done_tx = done_tx.clone();
                let worker = std::thread::Builder::new()
                    .name("repoprobe-load".into())
                    .spawn(move || {
                        loop {
                            let job = match queue.lock() {
                                Ok(q) => q.recv(),
                                Err(_) => return,
                            };
                            let Ok((seq, batch)) = job else { return };
                            let segments = parse_batch(&batch, options);
                            if done_tx.send((seq, segments, batch)).is_err() {
                                return;
                            }
                        }
                    });
                match worker {
                    Ok(w) => workers.push(w),
                    Err(_) => break,
                }
            }
            if workers.is_empty() {
                return None;
            }
            Some(Pool {
                jobs: Some(jobs),
                done,
                workers,
                options,
                sent: 0,
                next: 0,
                ready: BTreeMap::new(),
                spare: Vec::new(),
            })
        }

        /// Sends a batch to be parsed (waiting while the queue is full); gives back the
        /// results ready by now, in order, and a parsed batch to fill again, if any.
        pub(super) fn send(&mut self, batch: CutBatch) -> (Vec<Vec<Segment>>, Option<CutBatch>) {
            let seq = self.sent;
            self.sent += 1;
            if let Some(jobs) = &self.jobs
                && let Err(e) = jobs.send((seq, batch))
            {
                // Every worker is gone: parse here.
                let (seq, batch) = e.0;
                self.ready.insert(seq, parse_batch(&batch, self.options));
                self.spare.push(batch);
            }
            while let Ok((s, r, b)) = self.done.try_recv() {
                self.ready.insert(s, r);
                self.spare.push(b);
            }
            (self.in_order(), self.spare.pop())
        }

        fn in_order(&mut self) -> Vec<Vec<Segment>> {
            let mut out = Vec::new();
            while let Some(r) = self.ready.remove(&self.next) {
                out.push(r);
                self.next += 1;
            }
            out
        }

        /// Waits for every result; gives them back in order.
        pub(super) fn finish(mut self) -> Vec<Vec<Segment>> {
            self.jobs = None;
            while self.next + self.ready.len() < self.sent {
                match self.done.recv() {
                    Ok((s, r, _)) => {
                        self.ready.insert(s, r);
                    }
                    Err(_) => break,
                }
            }
            for w in self.workers.drain(..) {
                let _ = w.join();
            }
            let mut out = self.in_order();
            out.extend(std::mem::take(&mut self.ready).into_values());
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::synth::{SynthOptions, generate};
    use crate::{LoadOptions, SourceFile, load};

    /// Several batches' worth of records, as a bundle and as JSONL, loaded on threads and on
    /// one: the same load (batches come back in the order they were cut).
    #[test]
    fn threads_give_the_load_of_one_thread() {
        let bundle = generate(SynthOptions {
            models: 10,
            questions: 100,
            runs: 2,
            seed: 3,
        });
        let json = serde_json::to_vec(&bundle).unwrap();
        assert!(json.len() > 3 * super::BATCH_BYTES, "{} bytes", json.len());
        let mut jsonl = Vec::new();
        for j in &bundle.judgments {
            jsonl.extend(serde_json::to_vec(j).unwrap());
            jsonl.push(b'\n');
        }
        let files = [
            SourceFile {
                name: "a.json",
                bytes: &json,
            },
            SourceFile {
                name: "b.jsonl",
                bytes: &jsonl,
            },
        ];
        let print = |l: &crate::Loaded| format!("{:?} {:?} {:?}", l.dataset, l.issues, l.files);
        let one = load(&files, LoadOptions::default());
        assert!(one.issues.iter().all(|i| i.message.contains("duplicate")));
        let three = load(
            &files,
            LoadOptions {
                threads: 3,
                ..LoadOptions::default()
            },
        );
        assert_eq!(print(&three), print(&one));
    }
}
