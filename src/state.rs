//! The one shared state of the site: signals the views read (`expect_context::<AppState>()`).
//! The dataset lives in the Web Worker (`bin/repoprobe-worker`); here are the files given, the
//! worker's [`Snapshot`] of what the views list, and the report for the options in the URL.
//! How the worker is asked is `crate::requests` and `crate::transport`; how its answers change
//! these signals is `crate::reducer`. What one view asks for is that view's own
//! (`crate::query`), not here.

use crate::options::score_options;
use crate::protocol::{BundledSet, FetchFailure, QuestionData, ReportError, Snapshot, ViewOptions};
use leptos::prelude::*;
use repoprobe_core::ScoreReport;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use crate::protocol::Origin;

/// One input file. Its handle (a `Blob`) went to the worker, which holds it.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub name: String,
    pub origin: Origin,
    pub size: usize,
}

/// An `Arc` compared by identity, so memos downstream rerun only when the value is new.
#[derive(Debug)]
pub struct Shared<T>(pub Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[derive(Clone, Copy)]
pub struct AppState {
    /// Every file given, counted or not (see [`AppState::counted_files`]).
    pub files: RwSignal<Vec<InputFile>>,
    /// The bundled set fetched at start, if any.
    pub bundled_set: RwSignal<Option<BundledSet>>,
    /// Hex SHA-256 of each file by name, filled in after the tables are shown (the Data view).
    pub hashes: RwSignal<BTreeMap<String, String>>,
    /// Whether files are being fetched, read or scored, or why they could not be.
    pub busy: RwSignal<Busy>,
    /// The `?data=` URLs the worker could not fetch at start, with why.
    pub fetch_failures: RwSignal<Vec<FetchFailure>>,
    /// What the views list, from the worker.
    pub snapshot: RwSignal<Shared<Snapshot>>,
    pub options: Memo<ViewOptions>,
    /// The report for the options in force, or why an option cannot be honoured.
    pub report: RwSignal<Result<Shared<ScoreReport>, ReportError>>,
    /// Whether `report`'s 95 % intervals are still being computed: on large data the worker
    /// answers the tables first and the intervals after (`worker::scoring::defer_intervals`).
    pub intervals_pending: RwSignal<bool>,
    /// Judgments and answers of the questions viewed, by id: shared by the views that show a
    /// question (its page, the Grade view, the leaderboard's answers), asked once per load.
    pub questions: RwSignal<BTreeMap<String, Shared<QuestionData>>>,
}

/// What the page is waiting for, or what stopped it: said under the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Busy {
    /// Nothing: what is shown is the last load's.
    Idle,
    /// Files are being fetched at start, read or scored: what is under way, in words.
    Loading(&'static str),
    /// The data could not be had (a fetch failed, the worker did not start): why.
    Failed(String),
}

impl Busy {
    pub const LOADING_DATA: Busy = Busy::Loading("Loading the data…");
    pub const SCORING: Busy = Busy::Loading("Validating and scoring…");

    pub fn is_loading(&self) -> bool {
        matches!(self, Busy::Loading(_))
    }

    pub fn is_idle(&self) -> bool {
        *self == Busy::Idle
    }

    /// The line said under the sources (none when idle).
    pub fn said(&self) -> Option<String> {
        match self {
            Busy::Idle => None,
            Busy::Loading(what) => Some(what.to_string()),
            Busy::Failed(why) => Some(why.clone()),
        }
    }
}

impl AppState {
    /// Whether the user gave files of their own (dropped, picked, `?data=`).
    pub fn user_files(&self) -> bool {
        self.files
            .with(|f| f.iter().any(|f| f.origin != Origin::Bundled))
    }

    /// The files the numbers come from: the user's, and the bundled set if kept or alone.
    pub fn counted_files(&self) -> Vec<InputFile> {
        let keep = self.options.get().keep_bundled;
        let user = self.user_files();
        self.files.with(|f| {
            f.iter()
                .filter(|f| crate::options::counted(f.origin, keep, user))
                .cloned()
                .collect()
        })
    }
}

/// The report of no data under `o` (or why `o` cannot be honoured).
pub fn empty_report(o: &ViewOptions) -> Result<Shared<ScoreReport>, ReportError> {
    let o = score_options(o)?;
    Ok(Shared(Arc::new(ScoreReport::empty(&o))))
}

thread_local! {
    /// Questions asked of the worker since the last load (a view that lists several asks again
    /// as each answer arrives; the worker answers each once).
    static ASKED: RefCell<BTreeSet<String>> = const { RefCell::new(BTreeSet::new()) };
}

/// A new load: every question is to be asked again.
pub fn forget_asked() {
    ASKED.with(|a| a.borrow_mut().clear());
}

/// Whether question `id` is asked for the first time since the last load (and from now on, it
/// has been).
pub fn first_ask(id: &str) -> bool {
    ASKED.with(|a| a.borrow_mut().insert(id.to_string()))
}
