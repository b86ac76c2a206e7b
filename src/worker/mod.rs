//! The worker's logic, apart from the browser: which files a load reads, the snapshot and
//! reports it answers with, a question's data and the byte ranges that bring its texts back,
//! and which file to hash next; how each request is served, in what order and with which reads
//! (`serve`), over what the browser does (`host::Host`: `crate::worker_io` in the browser, a
//! fake in the native tests). `bin/repoprobe-worker` only hands it the messages. The files are
//! held as any handle `B` (a `Blob` there, bytes in the native tests), never read here.

pub mod compare;
pub mod grade;
pub mod hash;
pub mod host;
pub mod judges;
pub mod question;
pub mod release;
pub mod run_rows;
pub mod scoring;
pub mod search;
pub mod serve;
pub mod snapshot;
#[cfg(test)]
pub(crate) mod testdata;
#[cfg(test)]
mod tests;
pub mod trajectory;

use crate::options::counted;
use crate::protocol::{Origin, QuestionData, Snapshot, ViewOptions};
use question::{TextReads, Wanted};
use repoprobe_core::issue::{IssueKind, Place};
use repoprobe_core::{Issue, LoadOptions, Loaded, RecordKind, Severity, StreamLoader};
use std::collections::BTreeSet;

/// A file's handle as the worker holds it: a `Blob` in the browser (`crate::worker_io`, the
/// browser's edge), bytes in the native tests.
pub trait Handle: Clone {
    /// The file's size in bytes.
    fn bytes(&self) -> u64;
}

impl Handle for Vec<u8> {
    fn bytes(&self) -> u64 {
        self.len() as u64
    }
}

/// A file given to the worker.
struct Held<B> {
    name: String,
    origin: Origin,
    blob: B,
    /// Whether its hash was computed (or tried: a file that cannot be read has none).
    hash_tried: bool,
}

/// What the worker holds: every file added, with its origin, and the dataset loaded from
/// those that count.
pub struct Worker<B> {
    files: Vec<Held<B>>,
    loaded: Loaded,
    /// The files of the dataset loaded, by the number the loader gave them (`Span::file`).
    sources: Vec<B>,
    /// Records whose texts were read back since the last load.
    filled: BTreeSet<(RecordKind, usize)>,
    /// The trajectories files (never loaded as records) and the run read last.
    pub trajectories: trajectory::Store<B>,
    /// The release manifests (never loaded as records either).
    pub releases: release::Store<B>,
    /// The Runs view's rows under the last options asked for.
    runs: run_rows::Cache,
    /// The search over every run under way or done last: its text, whether a regular
    /// expression, and what it found.
    pub search: Option<(String, bool, search::Found)>,
}

impl<B> Default for Worker<B> {
    fn default() -> Self {
        Worker {
            files: Vec::new(),
            loaded: Loaded::default(),
            sources: Vec::new(),
            filled: BTreeSet::new(),
            trajectories: trajectory::Store::default(),
            releases: release::Store::default(),
            runs: run_rows::Cache::default(),
            search: None,
        }
    }
}

/// A load under way: the files it reads, in order, and the loader they are fed to.
pub struct Load<B> {
    pub files: Vec<(String, B)>,
    pub loader: StreamLoader,
    /// Files the browser could not read to their end.
    unread: Vec<Issue>,
}

impl<B> Load<B> {
    /// File `name` could be read only up to byte `at`, for `why`.
    pub fn unread(&mut self, name: &str, stopped: &host::Stopped) {
        self.unread.push(Issue::new(
            name,
            Place::Byte(stopped.read),
            IssueKind::UnreadableFile,
            format!("the browser could not read the file beyond this point: {stopped}"),
            Severity::File,
        ));
    }
}

impl<B: Handle> Worker<B> {
    /// Adds files (by position: a name, its origin, `dropped` when not given, and its handle).
    /// Trajectories files and their indexes go to the trajectory store, release manifests to
    /// theirs, never to the loader.
    pub fn add(&mut self, names: Vec<String>, origins: &[Origin], blobs: Vec<B>) {
        for ((i, name), blob) in names.into_iter().enumerate().zip(blobs) {
            let bytes = blob.bytes();
            if self.trajectories.add(&name, blob.clone(), bytes)
                || self.releases.add(&name, blob.clone(), bytes)
            {
                continue;
            }
            self.files.push(Held {
                name,
                origin: origins.get(i).copied().unwrap_or(Origin::Dropped),
                blob,
                hash_tried: false,
            });
        }
    }

    /// Starts a load of the files that count under `options` (the bundled set only if kept or
    /// alone, see `options::counted`), texts skipped (scores never read them; a question view
    /// reads its own back). The last load's data goes first: nothing reads it meanwhile, and a
    /// second large load then reuses its memory rather than adding to it.
    pub fn begin_load(&mut self, options: &ViewOptions) -> Load<B> {
        let user = self.files.iter().any(|f| f.origin != Origin::Bundled);
        let files = self
            .files
            .iter()
            .filter(|f| counted(f.origin, options.keep_bundled, user))
            .map(|f| (f.name.clone(), f.blob.clone()))
            .collect();
        self.loaded = Loaded::default();
        self.sources.clear();
        Load {
            files,
            loader: StreamLoader::new(LoadOptions {
                skip_text: true,
                ..LoadOptions::default()
            }),
            unread: Vec::new(),
        }
    }

    /// Ends a load whose files were all fed: what it holds, for the page.
    pub fn finish_load(&mut self, load: Load<B>) -> Snapshot {
        let mut loaded = load.loader.finish();
        loaded.issues.extend(load.unread);
        loaded.issues.extend(self.trajectories.issues());
        loaded.issues.extend(self.releases.issues());
        let snapshot = Snapshot {
            trajectories: self.trajectories.summary(),
            releases: self.releases.releases(),
            ..Snapshot::of(&loaded)
        };
        self.loaded = loaded;
        self.sources = load.files.into_iter().map(|(_, b)| b).collect();
        self.filled.clear();
        self.runs.clear();
        self.search = None;
        snapshot
    }

    /// A window of the runs under `options` (see [`run_rows::Cache`]).
    pub fn runs(
        &mut self,
        options: &ViewOptions,
        q: &crate::protocol::RunsQuery,
    ) -> Result<crate::protocol::RunsPage, crate::protocol::ReportError> {
        let trajectories = &self.trajectories;
        let hits = self
            .search
            .as_ref()
            .map(|(t, r, f)| (t.as_str(), *r, &f.runs));
        self.runs.page(
            &self.loaded.dataset,
            options,
            q,
            || trajectories.keys(),
            hits,
        )
    }

    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// The next file without a hash (marked as tried): its name and handle.
    pub fn next_to_hash(&mut self) -> Option<(String, B)> {
        let f = self.files.iter_mut().find(|f| !f.hash_tried)?;
        f.hash_tried = true;
        Some((f.name.clone(), f.blob.clone()))
    }

    /// The reads that bring question `id`'s skipped texts back, and what cannot be read.
    pub fn text_reads(&self, id: &str) -> (Vec<TextReads<B>>, Vec<String>) {
        let wanted = question::wanted(&self.loaded.dataset, id, &self.filled);
        let mut errors = Vec::new();
        let reads = question::plan(&wanted, &self.sources, &mut errors);
        (reads, errors)
    }

    /// The reads that bring back the rationales of the disagreements report `r` shows (see
    /// [`judges::wanted`]), and what cannot be read.
    pub fn judges_reads(
        &self,
        r: &repoprobe_core::metrics::judges::JudgesReport,
    ) -> (Vec<TextReads<B>>, Vec<String>) {
        let wanted = judges::wanted(&self.loaded.dataset, r, &self.filled);
        let mut errors = Vec::new();
        let reads = question::plan(&wanted, &self.sources, &mut errors);
        (reads, errors)
    }

    /// The reads that bring back the rationales of `judge`'s run-0 judgments (a grader's file
    /// taken as grades, see [`grade::wanted`]), and what cannot be read.
    pub fn grade_reads(&self, judge: &str) -> (Vec<TextReads<B>>, Vec<String>) {
        let wanted = grade::wanted(&self.loaded.dataset, judge, &self.filled);
        let mut errors = Vec::new();
        let reads = question::plan(&wanted, &self.sources, &mut errors);
        (reads, errors)
    }

    /// Puts back the texts of `wanted` from `bytes`, the file's bytes from `start` on (one
    /// read); what does not fit is said in `errors`.
    pub fn fill(&mut self, start: u64, wanted: &[Wanted], bytes: &[u8], errors: &mut Vec<String>) {
        for w in wanted {
            // A span that is not inside its read (it cannot be) reads as nothing.
            let (from, to) = (
                w.span.start.saturating_sub(start) as usize,
                w.span.end.saturating_sub(start) as usize,
            );
            let Some(record) = bytes.get(from..to) else {
                errors.push(format!(
                    "bytes {}–{} are no longer in the file",
                    w.span.start, w.span.end
                ));
                continue;
            };
            match self.loaded.dataset.fill_texts(w.kind, w.index, record) {
                Ok(()) => {
                    self.filled.insert((w.kind, w.index));
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
    }

    /// Question `id`'s data, with why some texts could not be read back.
    pub fn question(&self, id: &str, errors: &[String]) -> QuestionData {
        QuestionData {
            texts_error: question::texts_error(errors),
            trajectories: self.trajectories.runs_of(id),
            ..QuestionData::of(&self.loaded.dataset, id)
        }
    }
}
