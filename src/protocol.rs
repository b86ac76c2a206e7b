//! What the page and the worker say to each other, defined once for both (and for the worker's
//! start script, whose one message is [`Started`]). The worker owns the dataset (load + score run
//! there, off the main thread); the page gets a [`Snapshot`] of what every view lists, the
//! [`ScoreReport`] for the options in the URL, and answers to small queries (one question's
//! judgments and answers, a paired comparison, pages of one run's trajectory and the steps a
//! search in it finds). Everything but the files themselves (`Blob`
//! handles, never their bytes) travels as postcard made by these types ([`Response::encode`]),
//! why an answer holds no value too (`error.rs`: typed errors, not words); the core's free-form
//! JSON fields inside as JSON text (`repoprobe_core::json_text`), as is the judges' report
//! (`as_json.rs`), and the start script's one message as JSON ([`Started::from_script`]). Types
//! only: how the worker computes them is `crate::worker`, how the URL states the options is
//! `crate::options`.

mod as_json;
mod error;

use crate::markdown::Md;
use repoprobe_core::facts::ToolKind;
use repoprobe_core::load::FileSummary;
use repoprobe_core::metrics::cluster::{CiMethod, Cluster};
use repoprobe_core::metrics::items::ItemRow;
use repoprobe_core::metrics::runs::{Order, RunFilter, RunRow};
use repoprobe_core::model::Review;
use repoprobe_core::skip;
use repoprobe_core::{
    Answer, Issue, Judgment, MissingPolicy, Question, ReportedValue, ScoreReport,
};
use serde::{Deserialize, Serialize};

pub use error::{ReadError, ReportError, RunError};
pub use repoprobe_core::model::trajectory::StepSource;
pub use repoprobe_core::trajectories::TrajectoryKey;

/// What the worker posts once it can take messages (before that, messages would be lost).
pub const READY: &str = "{\"op\":\"ready\"}";

/// Where a file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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

/// A file the worker fetched itself at start (`bin/repoprobe-worker-start.js`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartFile {
    pub name: String,
    pub origin: Origin,
    pub size: usize,
    /// A trajectories file the start script did not download: its URL, read a run's line at a
    /// time by HTTP Range requests (its `Blob` beside the message is an empty stand-in).
    #[serde(default)]
    pub ranged: Option<String>,
    /// What the start script has to say about how it got the file (a server without Range
    /// support, a trajectories file without its index: downloaded whole).
    #[serde(default)]
    pub note: Option<String>,
}

/// A `?data=` URL the worker could not fetch at start, and why, in words (the start script
/// says: the server's HTTP status, a refusal of the network or of CORS, or no answer in time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchFailure {
    pub url: String,
    pub reason: String,
}

/// The bundled set the worker fetched at start (`?set=NAME` or the manifest's default), as
/// `public-data/index.json` describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BundledSet {
    pub name: String,
    #[serde(default)]
    pub label: String,
    /// The set is a few case studies, not enough questions to rank models on (the paper's):
    /// the landing view leads with the paper's reported table, then the case studies.
    #[serde(default)]
    pub case_studies: bool,
}

/// What the worker's start script (`bin/repoprobe-worker-start.js`) fetched before the wasm ran:
/// the files of the URL's `?set=` and `?data=` and what it could not fetch. It posts this one
/// message twice, the same JSON: to the page (a [`Response::Started`], so that the page lists
/// the files at once) and to the worker's wasm with the files' `Blob`s beside it (a
/// [`Request::Started`], which the worker loads under the options of its start query).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Started {
    pub files: Vec<StartFile>,
    /// What could not be fetched that is not a `?data=` URL (the manifest, the bundled set,
    /// the worker's own wasm), in words.
    pub failures: Vec<String>,
    /// The `?data=` URLs that could not be fetched.
    #[serde(default)]
    pub failed: Vec<FetchFailure>,
    /// The bundled set asked for, if any.
    #[serde(default)]
    pub set: Option<BundledSet>,
}

/// The options of the view, read from the URL (`crate::options`) (`?missing=exclude&judge=...&drop=q1,q2&w=q1/k1=2`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewOptions {
    pub missing: MissingPolicy,
    pub judge: Option<String>,
    /// What the standard errors and intervals treat as independent (`repoprobe score
    /// --cluster`): whole repositories by default.
    pub cluster: Cluster,
    /// How the 95 % intervals are made (`repoprobe score --ci`): the CLT by default.
    pub ci: CiMethod,
    /// Questions left out of every number (`repoprobe score --drop-question`), sorted, unique.
    pub drop: Vec<String>,
    /// Weight rules (`repoprobe score --weight`), in force order: `QUESTION/ITEM=W`.
    pub weights: Vec<String>,
    /// The contamination window (`repoprobe score --created-after`): only the questions created
    /// on or after this date count; as the URL gives it (scoring says when it is not a date).
    pub created_after: Option<String>,
    /// The bundled set counts beside the user's files (see `options::counted`); not a scoring option,
    /// but a report is for one set of files, so it is part of what a report answers.
    pub keep_bundled: bool,
}

/// A release manifest (`curate finalize`, docs/review.md#the-release-manifest) and the file it
/// came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Release {
    pub file: String,
    pub manifest: repoprobe_curate::finalize::Manifest,
}

/// Everything the views list, without the judgments and answers themselves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub files: Vec<FileSummary>,
    pub issues: Vec<Issue>,
    pub notes: Vec<String>,
    /// Valid records per kind, by bundle key.
    pub counts: Vec<(String, usize)>,
    pub questions: Vec<Question>,
    pub reported: Vec<ReportedValue>,
    /// Valid records per kind (bundle key) of each file, parallel to `files`, kinds with none
    /// left out: what each file gave, so that an empty view can say why per file.
    pub per_file: Vec<Vec<(String, usize)>>,
    /// The trajectories files held (`*.trajectories.jsonl`), which the record loader never
    /// reads: how each is indexed and how many runs it holds.
    pub trajectories: Vec<TrajectoryFile>,
    /// The release manifests held (`*.manifest.json`, never records): each release's funnel
    /// and selection, shown in the Data view.
    pub releases: Vec<Release>,
    /// The review records loaded (docs/format.md#review): the Review view's agreement and the
    /// reviewers' records an adjudicator reads. Small (no long texts but a note).
    pub reviews: Vec<Review>,
}

/// How a trajectories file's index was had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexHow {
    /// Its `*.trajectories.index.json`, given beside it and checked against it.
    Given,
    /// Made by reading every line's head (no index was given).
    Scanned,
    /// Not yet: the file has no index yet (or it could not be had: `error`).
    None,
}

/// A trajectories file as the worker holds it: its Blob (or URL) and index, never its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryFile {
    pub name: String,
    pub bytes: u64,
    pub runs: usize,
    pub index: IndexHow,
    /// Read by HTTP Range requests from its URL, not held.
    pub ranged: bool,
    /// How it was read, in words (no index given: scanned in N ms; a server without Range
    /// support: downloaded whole).
    pub notes: Vec<String>,
    /// Why it cannot be read (an index of another file): its runs are not shown.
    pub error: Option<String>,
}

/// What a step is, for the trajectory view's filter: model text, the kind of each of its tool
/// calls (the core's `ToolKind`, by `facts::kind_of`, a shell command counted by what it did),
/// an error, or a system or user message. Written as one word (`"text"`, `"read"`, …, the
/// URL's `&kind=` too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum StepKind {
    Text,
    Tool(ToolKind),
    Error,
    System,
    User,
}

impl StepKind {
    pub const READ: StepKind = StepKind::Tool(ToolKind::Read);
    pub const OTHER: StepKind = StepKind::Tool(ToolKind::Other);

    /// Every kind, in the order the filter lists them.
    pub fn all() -> impl Iterator<Item = StepKind> {
        std::iter::once(StepKind::Text)
            .chain(ToolKind::ALL.iter().copied().map(StepKind::Tool))
            .chain([StepKind::Error, StepKind::System, StepKind::User])
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Text => "text",
            StepKind::Tool(k) => k.as_str(),
            StepKind::Error => "error",
            StepKind::System => "system",
            StepKind::User => "user",
        }
    }

    pub fn parse(s: &str) -> Option<StepKind> {
        StepKind::all().find(|k| k.as_str() == s)
    }

    /// In words, for the filter and the steps' marks.
    pub fn label(self) -> &'static str {
        match self {
            StepKind::Text => "model text",
            StepKind::Tool(ToolKind::Other) => "other tool",
            other => other.as_str(),
        }
    }
}

impl From<StepKind> for String {
    fn from(k: StepKind) -> String {
        k.as_str().to_string()
    }
}

/// A step kind's name that is none of [`StepKind`]'s.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not a kind of step: {0:?}")]
pub struct UnknownStepKind(pub String);

impl TryFrom<String> for StepKind {
    type Error = UnknownStepKind;
    fn try_from(s: String) -> Result<StepKind, UnknownStepKind> {
        StepKind::parse(&s).ok_or(UnknownStepKind(s))
    }
}

/// One step in the trajectory's outline: every step has one (the filter reads their kinds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlineEntry {
    pub step: u64,
    pub source: StepSource,
    pub kinds: Vec<StepKind>,
    /// A line saying what the step is (its text's first line, else its tool calls), cut short.
    pub title: String,
}

/// A step as the view shows it: texts as text (cut when very long), tool calls with their input
/// as JSON text and their output, the paths each call read, tokens and time when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShownStep {
    pub step: u64,
    pub source: StepSource,
    pub kinds: Vec<StepKind>,
    pub model: Option<String>,
    pub timestamp: Option<String>,
    /// Seconds since the previous step with a time, when both are known.
    pub seconds: Option<f64>,
    pub text: String,
    pub reasoning: Option<String>,
    pub calls: Vec<ShownCall>,
    /// Why the run ended here (`extra.error`).
    pub error: Option<String>,
    /// Prompt, completion and cached tokens, each when known.
    pub tokens: Option<[Option<u64>; 3]>,
}

/// One tool call of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShownCall {
    pub name: String,
    pub kind: StepKind,
    /// The arguments as JSON text, absolute paths under the worktree made relative.
    pub input: String,
    /// Repository paths whose contents this call showed (the core's `Facts` of this call).
    pub read: Vec<String>,
    pub output: Option<String>,
    pub failed: bool,
    pub exit_code: Option<i64>,
}

/// What the view shows above the steps, sent with the first page of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryHead {
    pub agent: String,
    pub steps: u64,
    pub outline: Vec<OutlineEntry>,
    pub notes: Option<String>,
    /// What breaks ATIF's rules (`Trajectory::problems`).
    pub problems: Vec<String>,
    /// How its file was read (see [`TrajectoryFile::notes`]).
    pub file_notes: Vec<String>,
    /// Of the first steps only, read from the line's first bytes: `steps` and the outline count
    /// those, and a page of the whole run follows.
    pub partial: bool,
}

/// A page of one run's steps: those of `kinds` (all when empty) from step `from` on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryPage {
    /// With the first page after the trajectory was read.
    pub head: Option<TrajectoryHead>,
    pub kinds: Vec<StepKind>,
    pub from: u64,
    pub steps: Vec<ShownStep>,
    /// Where the next page starts, if any step of `kinds` is left.
    pub next: Option<u64>,
}

impl Snapshot {
    /// What the file named `name` gave: its valid records by kind (bundle key).
    pub fn gave(&self, name: &str) -> &[(String, usize)] {
        self.files
            .iter()
            .position(|f| f.name == name)
            .and_then(|i| self.per_file.get(i))
            .map_or(&[], Vec::as_slice)
    }

    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// Whether any file says it holds synthetic data (`meta.synthetic`).
    pub fn synthetic(&self) -> bool {
        self.files.iter().any(|f| {
            f.meta
                .as_ref()
                .and_then(|m| m.get("synthetic"))
                .and_then(|s| s.as_bool())
                == Some(true)
        })
    }
}

/// One question's judgments (every judge) and answers, for its detail view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionData {
    pub id: String,
    pub judgments: Vec<Judgment>,
    pub answers: Vec<Answer>,
    /// Each answer's text as a Markdown tree, parallel to `answers` (parsed here, in the
    /// worker, so the page's wasm carries no parser).
    pub answers_md: Vec<Md>,
    /// The question's reference answer as a Markdown tree.
    pub reference_md: Option<Md>,
    /// Why some answer texts or rationales could not be read back from their files (the
    /// worker reads them lazily, when a question is first viewed: a file changed on disk
    /// since it was loaded); those texts are left empty.
    pub texts_error: Option<String>,
    /// The (model, attempt) of its runs whose trajectory a trajectories file holds.
    pub trajectories: Vec<(String, u32)>,
}

/// Which runs the Runs view asks for: the core's filter and order, and the window of the kept
/// rows it shows (`from`, `count`): the worker holds every row, the page only those in view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunsQuery {
    pub filter: RunFilter,
    /// Only the runs the search for this text (plain, or `(text, true)` a regular expression)
    /// found so far; `hits` is how many runs it had found when asked, so that a window asked
    /// again as the search goes on is selected again.
    pub search: Option<(String, bool, usize)>,
    pub order: Option<Order>,
    pub from: usize,
    pub count: usize,
}

/// A window of the runs a [`RunsQuery`] keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunsPage {
    /// Every run (answer record of a question in force).
    pub total: usize,
    /// The runs the filter keeps.
    pub kept: usize,
    /// The first kept row's position in `rows`.
    pub from: usize,
    pub rows: Vec<RunRow>,
    /// Parallel to `rows`: whether a trajectories file holds the run.
    pub trajectory: Vec<bool>,
    pub judge: Option<String>,
    pub classifier: Option<String>,
    /// Every model and category among the runs, sorted: the filter's choices.
    pub models: Vec<String>,
    pub categories: Vec<String>,
}

/// A step of a run that holds what was searched for, with the match in its context (on one
/// line, cut to a few dozen characters on each side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub key: TrajectoryKey,
    pub step: u64,
    pub before: String,
    pub matched: String,
    pub after: String,
}

/// Where a search over every run stands: what it read of how much, and what it found so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchState {
    pub query: String,
    pub regex: bool,
    pub bytes_read: u64,
    pub bytes: u64,
    pub runs_read: usize,
    pub runs: usize,
    /// Runs with a hit (listed or not).
    pub runs_hit: usize,
    /// The hits listed (a few per run, up to a cap): in a message, those new since the last
    /// (the page keeps them all); `errors` likewise.
    pub hits: Vec<SearchHit>,
    /// It read every run (or it was stopped: `stopped`).
    pub done: bool,
    pub stopped: bool,
    /// Why it could not run, or lines it could not read.
    pub errors: Vec<String>,
}

/// A read of one tool call in the side-by-side view: the path, whether it is the question's
/// evidence, and whether this is the run's first read of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRead {
    pub path: String,
    pub evidence: bool,
    pub first: bool,
}

/// A tool call, shortened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareCall {
    pub name: String,
    pub kind: StepKind,
    pub input: String,
    pub read: Vec<CompareRead>,
    pub failed: bool,
}

/// A turn (a model response) of a run: its number, its step, its text shortened, its calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareTurn {
    pub turn: u64,
    pub step: u64,
    pub text: String,
    pub calls: Vec<CompareCall>,
}

/// One run of the side-by-side view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareSide {
    pub key: TrajectoryKey,
    pub agent: String,
    pub turns: Vec<CompareTurn>,
    /// Every path it read, in the order first read.
    pub read: Vec<String>,
    /// The paths it read and the other run did not.
    pub only: Vec<String>,
}

/// Two runs of one question, each read from its trajectories file (or why not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub id: String,
    /// The question's evidence paths.
    pub evidence: Vec<String>,
    pub a: Result<CompareSide, RunError>,
    pub b: Result<CompareSide, RunError>,
}

/// A request from the page. `Add` comes with the files' `Blob`s beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Externally tagged: an internally tagged enum is read through `deserialize_any`, which a reader
// by position (postcard) does not have.
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// The files the start script fetched (their `Blob`s beside the message, in the order of
    /// `files`): added as by `Add`, under the options of the worker's start query.
    Started(Started),
    /// Files to add to those the worker holds (their `Blob`s travel beside the request: handles
    /// to the browser's copy, which the worker reads as streams, never whole).
    Add {
        names: Vec<String>,
        /// Where each file came from (by position; `dropped` when not given).
        origins: Vec<Origin>,
        options: ViewOptions,
    },
    /// Load again from the files held, which count under `options.keep_bundled` (answered
    /// with `Loaded`).
    Reload {
        options: ViewOptions,
    },
    Score {
        options: ViewOptions,
    },
    /// A view's question, numbered by the page (`crate::query`): every reply to it is a
    /// [`Response::Reply`] with the same `id`, so that the page keeps the one it waits for and
    /// drops the others, without the question said again in the reply.
    Ask {
        id: u64,
        ask: Ask,
    },
    /// Stop the search under way.
    StopSearch,
}

/// What a view asks the worker (inside [`Request::Ask`]), each answered by the [`Reply`] of
/// the same name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    Question {
        id: String,
    },
    /// Per-item attainment and agreement under these options (large, so only when a view needs
    /// it), with the attainment per model of `model` only: every model's would be rows × models
    /// (~20 MB of JSON for 100 models on 1,400 questions), and one view shows one model's.
    Items {
        options: ViewOptions,
        model: Option<String>,
    },
    Paired {
        options: ViewOptions,
        a: String,
        b: String,
    },
    /// A page of one run's trajectory: `count` steps of `kinds` (all when empty) from step
    /// `from` on, with its head (outline) when `head`.
    Trajectory {
        key: TrajectoryKey,
        from: u64,
        kinds: Vec<StepKind>,
        count: usize,
        /// The page has no outline of this run yet: send it.
        head: bool,
    },
    /// The steps of the run's trajectory whose texts hold `query` (case-insensitive).
    TrajectorySearch {
        key: TrajectoryKey,
        query: String,
    },
    /// A window of the runs under these options (the judge, the weights, the questions in
    /// force), filtered and ordered.
    Runs {
        options: ViewOptions,
        query: RunsQuery,
    },
    /// Search every step of every run held for `query` (a regular expression when `regex`):
    /// answered by `Search` replies as it reads, the last `done`. A new search stops the last.
    Search {
        query: String,
        regex: bool,
    },
    /// Two runs of question `id` side by side (each a model and an attempt).
    Compare {
        id: String,
        a: (String, u32),
        b: (String, u32),
    },
    /// The agreement between judges (the core's `metrics::judges`) in the files that count
    /// under `options`: judge A against judge B, every judge where `None`.
    Judges {
        options: ViewOptions,
        a: Option<String>,
        b: Option<String>,
    },
    /// The answers a person grades (the Grade view): `sample` of those `judge` judged in run 0
    /// (the core's `grading::sample`; the judge with the most judgments not `human:*` where
    /// `None`), and every judge of the files.
    Grade {
        options: ViewOptions,
        judge: Option<String>,
        sample: repoprobe_core::grading::Sample,
    },
    /// The grades held in the run-0 judgments of `judge` (`human:NAME`) in the files, their
    /// rationales read back (the core's `grading::grades_of`): a grader's file taken into the
    /// Grade view's store.
    GradesOf {
        options: ViewOptions,
        judge: String,
    },
}

/// The worker's answer to a `Grade` ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeAnswer {
    /// Every judge of the files and how many judgments it has (any run), by name.
    pub judges: Vec<(String, usize)>,
    /// The judge sampled: the one asked, else the default (`None`: no judge in the files).
    pub chosen: Option<String>,
    pub drawn: repoprobe_core::grading::Drawn,
}

/// The worker's answer to a `GradesOf` ask: the grades by answer (a list: JSON maps have
/// string keys), and why some rationales could not be read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradesOfAnswer {
    pub grades: Vec<(
        repoprobe_core::AnswerKey,
        std::collections::BTreeMap<String, repoprobe_core::grading::Grade>,
    )>,
    pub texts_error: Option<String>,
}

/// The worker's answer to a `Judges` ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgesAnswer {
    #[serde(with = "as_json::ok")]
    pub report: Result<
        repoprobe_core::metrics::judges::JudgesReport,
        repoprobe_core::metrics::judges::UnknownJudge,
    >,
    /// Why some rationales could not be read back (a file changed since it was loaded).
    pub texts_error: Option<String>,
}

/// The worker's answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// Sent by the worker's start script (JavaScript), before its wasm runs. Their `Loaded`
    /// follows.
    Started(Started),
    /// A message the worker could not read, and why: a page and a worker of different builds,
    /// or a bug. The page reports it (a console error), never drops it silently.
    Rejected(String),
    /// The files' data and the report under `options` (those of the `Add` request). Not a
    /// numbered reply, and it says its options: the first load is the worker's own, under the
    /// options of its start query, which the page never asked (the page asks again under those
    /// in force when they differ, `crate::reducer`).
    Loaded {
        options: ViewOptions,
        // Boxed: the largest variant by far (serde reads and writes it as the value itself).
        snapshot: Box<Snapshot>,
        report: Result<ScoreReport, ReportError>,
        /// The report's bootstrap intervals are still being computed (see
        /// `worker::scoring::defer_intervals`): a `Report` for the same options brings them.
        intervals_pending: bool,
    },
    Report {
        options: ViewOptions,
        report: Result<ScoreReport, ReportError>,
        /// As in `Loaded`: a second `Report` for the same options brings the intervals.
        intervals_pending: bool,
    },
    /// Hex SHA-256 of files added, by name: sent after the tables, as each is known (the
    /// worker hashes in the background).
    Hashes(Vec<(String, String)>),
    /// A reply to the [`Request::Ask`] numbered `id` (a search replies several times).
    Reply { id: u64, body: Reply },
}

/// What a [`Request::Ask`] gets back: the answer alone, what was asked being the asker's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    Question(QuestionData),
    Items(Vec<ItemRow>),
    Paired(Box<Result<ScoreReport, ReportError>>),
    /// A page of a run's trajectory, or why it cannot be read.
    Trajectory(Result<TrajectoryPage, RunError>),
    /// The steps that hold the query, in order.
    TrajectorySearch(Result<Vec<u64>, RunError>),
    Runs(Result<RunsPage, ReportError>),
    /// How a search stands (after each read, and at its end).
    Search(SearchState),
    Compare(Box<Comparison>),
    /// The agreement between judges asked for: the report (the rationales of the disagreements
    /// shown read back), or why there is none (a judge not in the files).
    Judges(Box<JudgesAnswer>),
    /// The sample to grade asked for (the Grade view).
    Grade(Box<GradeAnswer>),
    /// A grader's judgments in the files, as grades (the Grade view's import).
    GradesOf(Box<GradesOfAnswer>),
}

/// A message that is none of these types: what was expected and why it does not read as it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub expected: &'static str,
    pub why: String,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a message that is not a {} ({}): are the page and its worker from the same build? Reload the page",
            self.expected, self.why
        )
    }
}

impl std::error::Error for Malformed {}

impl Request {
    /// A request as the worker reads it back: postcard, the fields in order with no names
    /// (see [`Response::encode`]).
    pub fn encode(&self) -> Vec<u8> {
        skip::whole(true, || postcard::to_allocvec(self)).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Result<Request, Malformed> {
        postcard::from_bytes(bytes).map_err(|e| Malformed {
            expected: "request to the worker",
            why: e.to_string(),
        })
    }
}

impl Response {
    /// An answer as the page reads it back; one that cannot be written (it cannot happen with
    /// these types) is said as a `Rejected` one.
    ///
    /// Postcard rather than JSON: the page and the worker are one build, so the fields' order
    /// is the schema, and a reader that needs no field names, no number formatting and no
    /// self-description is much less serde code in both wasm modules (issue 56; the figures
    /// in benches/README.md). The price: every field must be written, so the fields the JSON
    /// formats leave out when empty are written here all the same (`repoprobe_core::skip::whole`;
    /// tidy rule n keeps every `skip_serializing_if` on its predicates); and no field may be
    /// `flatten`ed or self-described (`serde_json::Value`), since a reader by position cannot
    /// know: such a field of the core's goes as JSON text (`repoprobe_core::json_text`: a
    /// question's `curation`, an answer's `agent`, a file's `meta`), and the judges' report
    /// whole (`as_json.rs`). The round-trip tests below and in `worker::serve` (every answer
    /// served there read back and compared) catch one that is not. Nor has any a default: a field
    /// is always there; only the start script's types, read from its JSON, have defaults.
    pub fn encode(&self) -> Vec<u8> {
        skip::whole(true, || postcard::to_allocvec(self)).unwrap_or_else(|e| {
            postcard::to_allocvec(&Response::Rejected(format!(
                "the worker could not write its answer: {e}"
            )))
            .unwrap_or_default()
        })
    }

    pub fn decode(bytes: &[u8]) -> Result<Response, Malformed> {
        postcard::from_bytes(bytes).map_err(|e| Malformed {
            expected: "worker's answer",
            why: e.to_string(),
        })
    }
}

/// The start script's one message, written in JavaScript (`JSON.stringify({started: …})`),
/// so JSON: the only message on the wire that is.
#[derive(Deserialize)]
struct StartMessage {
    started: Started,
}

impl Started {
    /// Reads the start script's message, which both the page and the worker get.
    pub fn from_script(text: &str) -> Result<Started, Malformed> {
        serde_json::from_str::<StartMessage>(text)
            .map(|m| m.started)
            .map_err(|e| Malformed {
                expected: "start script's message",
                why: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::score_options;
    use crate::worker::testdata::golden;
    use repoprobe_core::score;

    #[test]
    fn every_message_reads_back_as_it_was_written() {
        let l = golden();
        let options = ViewOptions::default();
        let report = score(&l.dataset, &l.issues, &score_options(&options).unwrap())
            .map_err(ReportError::from);
        let snapshot = Snapshot::of(&l);
        let mut responses = vec![
            reply(Reply::Question(QuestionData::of(&l.dataset, "q1"))),
            reply(Reply::Question(QuestionData {
                texts_error: Some("1 answer text(s) could not be read back".into()),
                ..QuestionData::of(&l.dataset, "q2")
            })),
            reply(Reply::Paired(Box::new(report.clone()))),
            reply(Reply::Judges(Box::new(JudgesAnswer {
                report: repoprobe_core::metrics::judges::judges(
                    &l.dataset,
                    &repoprobe_core::metrics::judges::JudgesOptions::default(),
                ),
                texts_error: Some("gone".into()),
            }))),
            reply(Reply::Grade(Box::new(crate::worker::grade::answer(
                &l.dataset,
                None,
                repoprobe_core::grading::Sample::Drawn {
                    per_model: 2,
                    seed: 1,
                },
            )))),
            reply(Reply::GradesOf(Box::new(GradesOfAnswer {
                grades: vec![(
                    repoprobe_core::AnswerKey {
                        question_id: "q1".into(),
                        model: "m|1".into(),
                        attempt: 0,
                    },
                    [(
                        "k1".to_string(),
                        repoprobe_core::grading::Grade {
                            score: 1,
                            rationale: "<b>x</b>".into(),
                        },
                    )]
                    .into_iter()
                    .collect(),
                )],
                texts_error: None,
            }))),
            Response::Rejected("why".into()),
            Response::Hashes(vec![("a".into(), "00".into())]),
            reply(Reply::Trajectory(Err(RunError::NotGiven))),
            reply(Reply::Trajectory(Ok(TrajectoryPage {
                head: Some(TrajectoryHead {
                    agent: "builtin 1".into(),
                    steps: 1,
                    outline: vec![OutlineEntry {
                        step: 1,
                        source: StepSource::Agent,
                        kinds: vec![StepKind::READ, StepKind::Error],
                        title: "read_file src/lib.rs".into(),
                    }],
                    notes: None,
                    problems: vec!["p".into()],
                    file_notes: Vec::new(),
                    partial: true,
                }),
                kinds: vec![StepKind::READ],
                from: 1,
                steps: vec![ShownStep {
                    step: 1,
                    source: StepSource::Agent,
                    kinds: vec![StepKind::READ],
                    model: None,
                    timestamp: Some("2026-01-01T00:00:00Z".into()),
                    seconds: Some(1.5),
                    text: "<b>x</b>".into(),
                    reasoning: None,
                    calls: vec![ShownCall {
                        name: "read_file".into(),
                        kind: StepKind::READ,
                        input: "{}".into(),
                        read: vec!["src/lib.rs".into()],
                        output: Some("o".into()),
                        failed: true,
                        exit_code: Some(2),
                    }],
                    error: None,
                    tokens: Some([Some(1), None, Some(0)]),
                }],
                next: Some(2),
            }))),
            reply(Reply::TrajectorySearch(Ok(vec![1, 3]))),
        ];
        for pending in [false, true] {
            responses.push(Response::Loaded {
                options: options.clone(),
                snapshot: Box::new(snapshot.clone()),
                report: report.clone(),
                intervals_pending: pending,
            });
            responses.push(Response::Report {
                options: options.clone(),
                report: report.clone(),
                intervals_pending: pending,
            });
        }
        for r in responses {
            assert_eq!(Response::decode(&r.encode()).unwrap(), r);
        }
        let req = Request::Add {
            names: vec!["x".into()],
            origins: vec![Origin::Dropped],
            options: ViewOptions {
                keep_bundled: true,
                ..ViewOptions::default()
            },
        };
        assert_eq!(Request::decode(&req.encode()).unwrap(), req);
        for ask in [
            Ask::Trajectory {
                key: key(),
                from: 41,
                kinds: vec![StepKind::Tool(ToolKind::Shell)],
                count: 40,
                head: true,
            },
            Ask::TrajectorySearch {
                key: key(),
                query: "needle".into(),
            },
        ] {
            let req = Request::Ask { id: 7, ask };
            assert_eq!(Request::decode(&req.encode()).unwrap(), req);
        }
    }

    /// A release manifest leaves its empty fields out of its JSON (`answered_rule`, a
    /// repository's `answered`); by position they must be written all the same, or every field
    /// after one left out is read as the one before it.
    #[test]
    fn a_release_with_fields_left_out_and_a_files_free_json_read_back() {
        use repoprobe_curate::finalize::{Manifest, Selection};
        use repoprobe_curate::funnel::{Funnel, RepoFunnel};
        let manifest = |rule: Option<&str>, answered: Option<u64>| Manifest {
            format: "repoprobe-release".into(),
            version: "v1".into(),
            date: "2026-03-15".into(),
            selection: Selection {
                answered_rule: rule.map(String::from),
                ..Selection::default()
            },
            review: Default::default(),
            funnel: Funnel {
                per_repository: [(
                    "o/r".to_string(),
                    RepoFunnel {
                        kept: true,
                        answered,
                        harvested: 3,
                        ..RepoFunnel::default()
                    },
                )]
                .into_iter()
                .collect(),
                ..Funnel::default()
            },
            agreement: Default::default(),
            files: Vec::new(),
        };
        let releases = [(None, None), (Some("each"), Some(4))]
            .into_iter()
            .map(|(rule, answered)| Release {
                file: "r.manifest.json".into(),
                manifest: manifest(rule, answered),
            })
            .collect();
        let sent = Response::Loaded {
            options: ViewOptions::default(),
            snapshot: Box::new(Snapshot {
                releases,
                // Free-form JSON, which no positional reader can follow: it goes as JSON text.
                files: vec![FileSummary {
                    name: "b.json".into(),
                    shape: "bundle".into(),
                    meta: Some(serde_json::json!({"run": {"seed": 1, "tags": ["a", null]}})),
                    ..FileSummary::default()
                }],
                ..Snapshot::default()
            }),
            report: Err(ReportError::Score(
                repoprobe_core::metrics::ScoreError::UnknownQuestion("q".into()),
            )),
            intervals_pending: false,
        };
        assert_eq!(Response::decode(&sent.encode()), Ok(sent));
        // Their JSON is as documented: the empty fields left out.
        let json = serde_json::to_string(&manifest(None, None)).unwrap();
        assert!(!json.contains("answered"), "{json}");
    }

    /// The file formats' free-form parts (a question's `curation`, an answer's `agent` block
    /// with fields no runner of ours writes, evidence written both ways, a file's `meta`) go
    /// by position as JSON text and read back whole.
    #[test]
    fn free_json_inside_questions_answers_and_files_reads_back_by_position() {
        use repoprobe_core::{LoadOptions, SourceFile, load};
        let golden = crate::worker::testdata::FILES;
        let question = br#"{"id": "qx", "repo": {"name": "o/r", "url": "https://example.invalid/r", "commit": "0000000000000000000000000000000000000000", "language": "Rust", "theme": "T"}, "category": "Project Architecture", "question": "Why?", "reference_answer": "Because", "checklist": [{"id": "k1", "kind": "knowledge", "key_point": "f", "weight": 9, "rubric": [{"score": 9, "criterion": "y"}, {"score": 0, "criterion": "n"}], "evidence": ["src/a.rs", {"path": "src/b.rs", "lines": [3, 9], "source": "cited"}]}, {"id": "clarity", "kind": "clarity", "key_point": "Clarity", "weight": 1, "rubric": [{"score": 1, "criterion": "clear"}, {"score": 0, "criterion": "not"}]}], "curation": {"thread": {"url": "https://example.invalid/t", "created_at": "2024-02-01T00:00:00Z"}, "stages": [1, null, "x"]}}
"#;
        let answer = br#"{"question_id": "qx", "model": "m", "answer": "a", "agent": {"name": "other-runner", "turns": "many", "files_read": ["src/a.rs"], "their_own": {"deep": [true]}}}
"#;
        let bundle = br#"{"format": "repoprobe-results", "version": 1, "meta": {"run": {"seed": 1, "tags": ["a", null]}}}"#;
        let files = [
            SourceFile {
                name: "benchmark.jsonl",
                bytes: &question[..],
            },
            SourceFile {
                name: "answers.jsonl",
                bytes: &answer[..],
            },
            SourceFile {
                name: "run.json",
                bytes: &bundle[..],
            },
            SourceFile {
                name: golden[2].0,
                bytes: golden[2].1,
            },
        ];
        let l = load(&files, LoadOptions::default());
        let broken = |file| l.issues.iter().filter(move |i| i.file == file);
        assert_eq!(
            broken("benchmark.jsonl")
                .chain(broken("answers.jsonl"))
                .count(),
            0,
            "{:?}",
            l.issues
        );
        let snapshot = Snapshot::of(&l);
        assert!(snapshot.questions[0].curation.is_some());
        assert!(snapshot.files.iter().any(|f| f.meta.is_some()));
        let data = QuestionData::of(&l.dataset, "qx");
        let agent = data.answers[0].agent.as_deref().expect("the block");
        assert_eq!(
            agent.turns, None,
            "a field of the wrong type reads as absent"
        );
        assert!(agent.other.contains_key("their_own"));
        for sent in [
            Response::Loaded {
                options: ViewOptions::default(),
                snapshot: Box::new(snapshot),
                report: Err(ReportError::Score(
                    repoprobe_core::metrics::ScoreError::UnknownQuestion("q".into()),
                )),
                intervals_pending: false,
            },
            reply(Reply::Question(data)),
        ] {
            assert_eq!(Response::decode(&sent.encode()), Ok(sent));
        }
    }

    fn reply(body: Reply) -> Response {
        Response::Reply { id: 3, body }
    }

    fn key() -> TrajectoryKey {
        TrajectoryKey {
            question_id: "q1".into(),
            model: "m".into(),
            attempt: 0,
        }
    }

    /// The page matches the worker's errors by variant and says the worker's words: each kind
    /// reads back whole, with the same words (a byte count, an HTTP status, a run's key too).
    #[test]
    fn every_error_reads_back_as_the_worker_said_it() {
        use repoprobe_core::dataset::WindowError;
        use repoprobe_core::metrics::ScoreError;
        use repoprobe_core::metrics::panel::PanelError;
        use repoprobe_core::metrics::weights::{BadRule, WeightRuleError};
        use repoprobe_core::trajectories::TrajectoryError;
        let runs = [
            RunError::NotGiven,
            RunError::NotHeld,
            RunError::Read(ReadError::Browser("NotReadableError".into())),
            RunError::Read(ReadError::Fetch("TypeError: Failed to fetch".into())),
            RunError::Read(ReadError::NotRange(200)),
            RunError::Read(ReadError::Short { sent: 2, asked: 3 }),
            RunError::Line(TrajectoryError::PastTheEnd(key())),
            RunError::Line(TrajectoryError::OtherFile {
                indexed: 1,
                given: 2,
            }),
            RunError::Line(TrajectoryError::NotALine("EOF".into())),
            RunError::OtherRun {
                found: key(),
                file: "r.trajectories.jsonl".into(),
            },
        ];
        let reports = [
            ReportError::Weights(WeightRuleError {
                text: "q1/k1".into(),
                why: BadRule::NoEquals,
            }),
            ReportError::Weights(WeightRuleError {
                text: "q1/k1=x".into(),
                why: BadRule::NotAWeight("x".into()),
            }),
            ReportError::Score(ScoreError::UnknownJudge("j".into(), "\"a\"".into())),
            ReportError::Score(ScoreError::Window(WindowError::NotADate("x".into()))),
            ReportError::Score(ScoreError::Panel(PanelError::TooFew(1))),
        ];
        let mut responses: Vec<Response> = runs
            .iter()
            .map(|e| reply(Reply::TrajectorySearch(Err(e.clone()))))
            .collect();
        responses.push(reply(Reply::Compare(Box::new(Comparison {
            id: "q1".into(),
            evidence: Vec::new(),
            a: Err(runs[4].clone()),
            b: Err(runs[9].clone()),
        }))));
        responses.extend(reports.iter().map(|e| reply(Reply::Runs(Err(e.clone())))));
        responses.push(reply(Reply::Judges(Box::new(JudgesAnswer {
            report: Err(repoprobe_core::metrics::judges::UnknownJudge {
                name: "x".into(),
                known: "none".into(),
            }),
            texts_error: None,
        }))));
        for r in responses {
            assert_eq!(Response::decode(&r.encode()).unwrap(), r);
        }
        assert_eq!(
            runs[4].to_string(),
            "the server answered HTTP 200 to a Range request (206 expected): load the page again to download the file whole"
        );
        assert_eq!(
            reports[0].to_string(),
            "weight rule \"q1/k1\" has no '=': write QUESTION/ITEM=WEIGHT, e.g. q1/k2=0, */@clarity=2 or */@knowledge=1"
        );
    }

    #[test]
    fn a_malformed_message_says_what_it_is_not() {
        // A request cut short: its last field's bytes missing.
        let bytes = Request::Reload {
            options: ViewOptions::default(),
        }
        .encode();
        let e = Request::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert_eq!(e.expected, "request to the worker");
        // A variant number no answer has.
        let e = Response::decode(&[0x7f]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a message that is not a worker's answer"),
            "{e}"
        );
        // The start script's message without its files.
        let e = Started::from_script("{\"started\":{\"failures\":[]}}").unwrap_err();
        assert_eq!(e.expected, "start script's message");
        assert!(e.to_string().contains("missing field `files`"), "{e}");
    }

    #[test]
    fn the_start_scripts_message_reads_as_started() {
        // What bin/repoprobe-worker-start.js posts (JSON.stringify of this shape).
        let text = r#"{"started":{"files":[{"name":"public-data/sample/benchmark.jsonl","origin":"bundled","size":11155},{"name":"x.json","origin":"url","size":2}],"failures":["y.json: HTTP 404 for y.json"]}}"#;
        let started = Started {
            files: vec![
                StartFile {
                    name: "public-data/sample/benchmark.jsonl".into(),
                    origin: Origin::Bundled,
                    size: 11155,
                    ranged: None,
                    note: None,
                },
                StartFile {
                    name: "x.json".into(),
                    origin: Origin::Url,
                    size: 2,
                    ranged: None,
                    note: None,
                },
            ],
            failures: vec!["y.json: HTTP 404 for y.json".into()],
            failed: Vec::new(),
            set: None,
        };
        assert_eq!(Started::from_script(text).unwrap(), started);
        // A `?data=` URL it could not fetch, and the set it fetched.
        let text = r#"{"started":{"files":[],"failures":[],"failed":[{"url":"https://x.org/j.jsonl","reason":"the server answered HTTP 404 Not Found"}],"set":{"name":"paper","label":"The paper","case_studies":true}}}"#;
        let s = Started::from_script(text).unwrap();
        assert_eq!(
            s.failed,
            [FetchFailure {
                url: "https://x.org/j.jsonl".into(),
                reason: "the server answered HTTP 404 Not Found".into()
            }]
        );
        assert_eq!(
            s.set,
            Some(BundledSet {
                name: "paper".into(),
                label: "The paper".into(),
                case_studies: true
            })
        );
        // When its wasm did not start: no files, and why.
        let text = r#"{"started":{"files":[],"failures":["the worker's wasm: x"]}}"#;
        assert!(matches!(Started::from_script(text), Ok(s) if s.failures.len() == 1));
    }
}
