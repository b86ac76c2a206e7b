//! The one shared state of the site: the files loaded, the dataset the core made of them, and
//! the report for the options in the URL. Pages read it with `expect_context::<AppState>()`.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use repoprobe_core::{
    LoadOptions, Loaded, MissingPolicy, ScoreOptions, ScoreReport, SourceFile, load, score,
};
use std::sync::Arc;

/// Where a file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Bundled,
    Dropped,
    Url,
}

impl Origin {
    pub fn label(self) -> &'static str {
        match self {
            Origin::Bundled => "bundled",
            Origin::Dropped => "your file",
            Origin::Url => "URL",
        }
    }
}

/// One input file as bytes.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub name: String,
    pub origin: Origin,
    pub bytes: Arc<Vec<u8>>,
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

/// The options of the view, read from the URL (`?missing=exclude&judge=...`).
#[derive(Debug, Clone, PartialEq)]
pub struct ViewOptions {
    pub missing: MissingPolicy,
    pub judge: Option<String>,
}

#[derive(Clone, Copy)]
pub struct AppState {
    pub files: RwSignal<Vec<InputFile>>,
    /// Hex SHA-256 of each file by name, filled in after the tables are shown (the Data view).
    pub hashes: RwSignal<std::collections::BTreeMap<String, String>>,
    /// A message while files are being fetched or read.
    pub busy: RwSignal<Option<String>>,
    pub loaded: Memo<Shared<Loaded>>,
    pub options: Memo<ViewOptions>,
    /// The report for the options in force; an error message if an option cannot be honoured.
    pub report: Memo<Result<Shared<ScoreReport>, String>>,
}

/// The CLI's defaults, so that the site shows what `repoprobe score` prints.
pub fn score_options(o: &ViewOptions) -> ScoreOptions {
    ScoreOptions {
        missing: o.missing,
        judge: o.judge.clone(),
        items: true,
        ..ScoreOptions::default()
    }
}

/// Creates the state and puts it in context. Must run inside the router.
pub fn provide_state() -> AppState {
    let files = RwSignal::new(Vec::<InputFile>::new());
    let busy = RwSignal::new(None);
    let loaded = Memo::new(move |_| {
        let files = files.get();
        let sources: Vec<SourceFile> = files
            .iter()
            .map(|f| SourceFile {
                name: &f.name,
                bytes: &f.bytes,
            })
            .collect();
        Shared(Arc::new(load(&sources, LoadOptions::default())))
    });
    let query = use_query_map();
    let options = Memo::new(move |_| {
        let q = query.get();
        ViewOptions {
            missing: match q.get("missing").as_deref() {
                Some("exclude") => MissingPolicy::Exclude,
                _ => MissingPolicy::Zero,
            },
            judge: q.get("judge").filter(|j| !j.is_empty()),
        }
    });
    let report = Memo::new(move |_| {
        let l = loaded.get();
        let o = options.get();
        score(&l.dataset, &l.issues, &score_options(&o))
            .map(|r| Shared(Arc::new(r)))
            .map_err(|e| e.to_string())
    });
    let state = AppState {
        files,
        hashes: RwSignal::new(Default::default()),
        busy,
        loaded,
        options,
        report,
    };
    provide_context(state);
    state
}
