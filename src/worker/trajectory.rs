//! The trajectories files the worker holds (docs/format.md#trajectories-file), apart from the
//! record loader, which never reads them: each file's handle (a `Blob`, or its URL when read by
//! HTTP Range requests) and its index of byte ranges, never its text. A run's line is read by
//! its range when the question view asks for it, and that one trajectory is held
//! ([`steps::Held`]) to answer pages of its steps and searches over it.
//!
//! Which file is which is said by its name alone (`*.trajectories.jsonl`, its index
//! `*.trajectories.index.json`): routing happens before any byte is read, so a 2 GB file of
//! trajectories is never streamed through the record loader.

pub mod steps;

use crate::protocol::{
    IndexHow, ReadError, RunError, StepKind, TrajectoryFile, TrajectoryKey, TrajectoryPage,
};
use repoprobe_core::issue::{IssueKind, Place};
use repoprobe_core::sort::SharedSort;
use repoprobe_core::trajectories::{Index, IndexEntry, Scanner};
use repoprobe_core::{Issue, Severity};
use steps::Held;

/// How a trajectories file's name ends.
pub const LINES: &str = ".trajectories.jsonl";
/// How its index's name ends (the same stem).
pub const INDEX: &str = ".trajectories.index.json";

/// What a file given to the worker is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Lines,
    Index,
}

/// A name without a URL's query or fragment (`?data=https://x/r.trajectories.jsonl?raw=1`).
fn bare(name: &str) -> &str {
    name.split(['?', '#']).next().unwrap_or(name)
}

/// Whether `name` is a trajectories file or its index (`None`: a results file).
pub fn role(name: &str) -> Option<Role> {
    let b = bare(name);
    if b.ends_with(LINES) {
        Some(Role::Lines)
    } else if b.ends_with(INDEX) {
        Some(Role::Index)
    } else {
        None
    }
}

/// The name of the trajectories file the index `name` is of.
pub fn lines_of(index: &str) -> String {
    let b = bare(index);
    format!("{}{LINES}", b.strip_suffix(INDEX).unwrap_or(b))
}

/// Where a trajectories file's bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum Source<B> {
    /// A `Blob` (a dropped file, or a body the start script downloaded).
    Blob(B),
    /// A URL answering HTTP Range requests.
    Url(String),
}

struct File<B> {
    name: String,
    source: Source<B>,
    bytes: u64,
    index: Option<Index>,
    how: IndexHow,
    notes: Vec<String>,
    error: Option<String>,
}

/// A read the glue is to do for the store, and hand back.
#[derive(Debug, Clone, PartialEq)]
pub enum Work<B> {
    /// Read the index file `index` whole (it is small) and give it to [`Store::index_read`].
    ReadIndex { file: String, index: B },
    /// Stream `blob` through a [`Scanner`] and give it to [`Store::scanned`].
    Scan { file: String, blob: B },
}

/// Every trajectories file given, and the one trajectory read last.
pub struct Store<B> {
    files: Vec<File<B>>,
    /// Index files by the trajectories file they are of.
    indexes: Vec<(String, B)>,
    /// Notes on files about to be added (how the start script got them), by name.
    notes: Vec<(String, String)>,
    held: Option<Held>,
}

impl<B> Default for Store<B> {
    fn default() -> Self {
        Store {
            files: Vec::new(),
            indexes: Vec::new(),
            notes: Vec::new(),
            held: None,
        }
    }
}

/// Where one run's line is: its file's source and byte range.
#[derive(Debug, Clone, PartialEq)]
pub struct LineAt<B> {
    pub file: String,
    pub source: Source<B>,
    pub offset: u64,
    pub length: u64,
}

impl<B: Clone> Store<B> {
    /// Takes `name` if it is a trajectories file or an index (`false`: a results file, for the
    /// loader). `bytes` is the file's size.
    pub fn add(&mut self, name: &str, blob: B, bytes: u64) -> bool {
        match role(name) {
            None => false,
            Some(Role::Index) => {
                self.indexes.push((lines_of(name), blob));
                true
            }
            Some(Role::Lines) => {
                self.push(name, Source::Blob(blob), bytes, None);
                true
            }
        }
    }

    /// A trajectories file read from `url` by HTTP Range requests, `bytes` long; its index is
    /// given as a file of its own.
    pub fn add_ranged(&mut self, name: &str, url: &str, bytes: u64, note: Option<String>) {
        self.push(name, Source::Url(url.to_string()), bytes, note);
    }

    /// A note on file `name`, given before the file itself (the start script's words on how it
    /// got it).
    pub fn note(&mut self, name: &str, note: &str) {
        self.notes.push((name.to_string(), note.to_string()));
    }

    fn push(&mut self, name: &str, source: Source<B>, bytes: u64, note: Option<String>) {
        let mut notes: Vec<String> = note.into_iter().collect();
        notes.extend(
            self.notes
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, t)| t.clone()),
        );
        self.notes.retain(|(n, _)| n != name);
        // The same file given again replaces the one held (a new version of it).
        self.files.retain(|f| f.name != name);
        if self.held.as_ref().is_some_and(|h| h.file == name) {
            self.held = None;
        }
        self.files.push(File {
            name: name.to_string(),
            source,
            bytes,
            index: None,
            how: IndexHow::None,
            notes,
            error: None,
        });
    }

    /// The reads that index the files not indexed yet: an index given beside a file is read,
    /// a file without one is scanned (its line heads only).
    pub fn work(&mut self) -> Vec<Work<B>> {
        let mut out = Vec::new();
        for f in self
            .files
            .iter_mut()
            .filter(|f| f.how == IndexHow::None && f.error.is_none())
        {
            let stem = bare(&f.name).to_string();
            match (self.indexes.iter().find(|(n, _)| *n == stem), &f.source) {
                (Some((_, index)), _) => out.push(Work::ReadIndex {
                    file: f.name.clone(),
                    index: index.clone(),
                }),
                (None, Source::Blob(b)) => out.push(Work::Scan {
                    file: f.name.clone(),
                    blob: b.clone(),
                }),
                (None, Source::Url(_)) => {
                    f.error = Some("no index to read it by range".into());
                }
            }
        }
        out
    }

    fn file(&mut self, name: &str) -> Option<&mut File<B>> {
        self.files.iter_mut().find(|f| f.name == name)
    }

    /// The index of `file` read (its bytes, or why they could not be read), checked against
    /// the file: one of another file is an error of the file.
    pub fn index_read(&mut self, file: &str, json: Result<Vec<u8>, ReadError>) {
        let Some(f) = self.file(file) else { return };
        // A URL whose server did not say its size (no Content-Range it lets us read): the
        // index's word is taken, and a line of another run is refused when read.
        let unknown = f.bytes == 0 && matches!(f.source, Source::Url(_));
        let checked = json.map_err(|e| e.to_string()).and_then(|j| {
            let bytes = match unknown {
                true => serde_json::from_slice::<Index>(&j).map_or(0, |i| i.bytes),
                false => f.bytes,
            };
            Index::read(&j, bytes).map_err(|e| e.to_string())
        });
        match checked {
            Ok(index) => {
                if unknown {
                    f.bytes = index.bytes;
                    f.notes.push(
                        "the server did not say the file's size: the index's is taken".into(),
                    );
                }
                f.index = Some(index);
                f.how = IndexHow::Given;
            }
            Err(e) => f.error = Some(format!("its index cannot be used: {e}")),
        }
    }

    /// The index `scan` made of `file`, read to byte `read` in `ms` (`unread`: why the browser
    /// could not read it all).
    pub fn scanned(&mut self, file: &str, scan: Scanner, ms: f64, unread: Option<ReadError>) {
        let Some(f) = self.file(file) else { return };
        let (index, problems) = scan.finish();
        let mb = index.bytes as f64 / 1e6;
        f.notes.push(format!(
            "no index was given: made one by reading the file's {} lines ({mb:.1} MB in {:.0} ms{})",
            index.entries.len(),
            ms,
            if ms > 0.0 {
                format!(", {:.0} MB/s", mb / (ms / 1000.0))
            } else {
                String::new()
            }
        ));
        if let Some(first) = problems.first() {
            f.notes.push(format!(
                "{} line(s) could not be indexed: {first}",
                problems.len()
            ));
        }
        match unread {
            Some(why) => f.error = Some(format!("the browser could not read it: {why}")),
            None => {
                f.index = Some(index);
                f.how = IndexHow::Scanned;
            }
        }
    }

    /// The files held, as the Data view lists them.
    pub fn summary(&self) -> Vec<TrajectoryFile> {
        self.files
            .iter()
            .map(|f| TrajectoryFile {
                name: f.name.clone(),
                bytes: f.bytes,
                runs: f.index.as_ref().map_or(0, |i| i.entries.len()),
                index: f.how,
                ranged: matches!(f.source, Source::Url(_)),
                notes: f.notes.clone(),
                error: f.error.clone(),
            })
            .collect()
    }

    /// What cannot be read, as issues of their files (the load problems line and the Data view
    /// say them in the loader's words).
    pub fn issues(&self) -> Vec<Issue> {
        let mut out: Vec<Issue> = self
            .files
            .iter()
            .filter_map(|f| {
                Some(Issue::new(
                    f.name.clone(),
                    Place::Index,
                    IssueKind::UnreadableFile,
                    f.error.clone()?,
                    Severity::File,
                ))
            })
            .collect();
        for (lines, _) in &self.indexes {
            if !self.files.iter().any(|f| bare(&f.name) == lines) {
                out.push(Issue::new(
                    format!("{}{INDEX}", lines.strip_suffix(LINES).unwrap_or(lines)),
                    Place::File,
                    IssueKind::MissingFile,
                    format!("an index of {lines}, which was not given: give it too"),
                    Severity::Warning,
                ));
            }
        }
        out
    }

    /// The (model, attempt) of question `id`'s runs that a readable file holds.
    pub fn runs_of(&self, id: &str) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self
            .files
            .iter()
            .filter(|f| f.error.is_none())
            .flat_map(|f| f.index.iter().flat_map(|i| i.entries.iter()))
            .filter(|e| e.key.question_id == id)
            .map(|e| (e.key.model.clone(), e.key.attempt))
            .collect();
        out.shared_sort();
        out.dedup();
        out
    }

    /// The runs' lines of every readable file, in file order: its name, where it is read from,
    /// and its index's entries (each run's byte range).
    pub fn lines(&self) -> impl Iterator<Item = (&str, &Source<B>, &[IndexEntry])> {
        self.files
            .iter()
            .filter(|f| f.error.is_none())
            .filter_map(|f| {
                Some((
                    f.name.as_str(),
                    &f.source,
                    f.index.as_ref()?.entries.as_slice(),
                ))
            })
    }

    /// Every run a readable file holds.
    pub fn keys(&self) -> std::collections::HashSet<TrajectoryKey> {
        self.files
            .iter()
            .filter(|f| f.error.is_none())
            .flat_map(|f| f.index.iter().flat_map(|i| i.entries.iter()))
            .map(|e| e.key.clone())
            .collect()
    }

    /// Where the line of run `key` is (the first readable file that holds it).
    pub fn find(&self, key: &TrajectoryKey) -> Option<LineAt<B>> {
        self.files
            .iter()
            .filter(|f| f.error.is_none())
            .find_map(|f| {
                let e = f.index.as_ref()?.find(key)?;
                Some(LineAt {
                    file: f.name.clone(),
                    source: f.source.clone(),
                    offset: e.offset,
                    length: e.length,
                })
            })
    }

    /// The run of `key`, if it is the one held.
    pub fn held(&self, key: &TrajectoryKey) -> Option<&Held> {
        self.held.as_ref().filter(|h| &h.key == key)
    }

    pub fn held_mut(&mut self, key: &TrajectoryKey) -> Option<&mut Held> {
        self.held.as_mut().filter(|h| &h.key == key)
    }

    fn notes_of(&self, file: &str) -> Vec<String> {
        self.files
            .iter()
            .find(|f| f.name == file)
            .map(|f| f.notes.clone())
            .unwrap_or_default()
    }

    /// Holds the run of `key` from its line's bytes (read from `file`), in place of the one
    /// held: one trajectory at a time, however many files.
    pub fn open(&mut self, key: &TrajectoryKey, file: &str, bytes: &[u8]) -> Result<(), RunError> {
        self.held = None;
        self.held = Some(Held::read(key, file, bytes, self.notes_of(file))?);
        Ok(())
    }

    /// The page asked for of run `key` from its line's first bytes `first` (read from `file`),
    /// its head marked partial: shown while the whole line is read, never held. `None` when
    /// they hold no step of that page, or are not a line of that run.
    pub fn preview(
        &self,
        key: &TrajectoryKey,
        file: &str,
        first: &[u8],
        from: u64,
        kinds: &[StepKind],
        count: usize,
    ) -> Option<TrajectoryPage> {
        let h = Held::preview(key, file, first, self.notes_of(file))?;
        let page = h.page(from, kinds, count, true);
        (!page.steps.is_empty()).then_some(page)
    }
}

#[cfg(test)]
mod tests;
