//! What the page and the worker say to each other. The worker owns the dataset (load + score
//! run there, off the main thread); the page gets a [`Snapshot`] of what every view lists, the
//! [`ScoreReport`] for the options in the URL, and answers to small queries (one question's
//! judgments and answers, a paired comparison). Everything but the files themselves (`Blob`
//! handles, never their bytes) travels as JSON made by these types; no leptos here, so the
//! worker binary stays small.

use crate::markdown::{self, Md};
use repoprobe_core::load::FileSummary;
use repoprobe_core::metrics::evidence::{ModelEvidence, evidence};
use repoprobe_core::metrics::weights;
use repoprobe_core::{
    Answer, Dataset, Issue, Judgment, Loaded, MissingPolicy, Question, RecordKind, ReportedValue,
    ScoreOptions, ScoreReport, WeightRule,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// Whether a file counts in the numbers. The bundled set is an example: files the user adds
/// (drop, picker, `?data=`) replace it, unless the user keeps it (`keep`). With no file of the
/// user's, the bundled set is what there is.
pub fn counted(origin: Origin, keep_bundled: bool, user_files: bool) -> bool {
    origin != Origin::Bundled || keep_bundled || !user_files
}

/// The `keep` of the URL: `keep=1`/`keep=0` say it; without it, the bundled set is kept only
/// when the URL names both a set and data (`?set=paper&data=…`), never for `?data=…` alone.
/// (`bin/repoprobe-worker-start.js` reads it the same way for the first load.)
pub fn keep_bundled(keep: Option<&str>, set: Option<&str>, data: bool) -> bool {
    match keep {
        Some(k) => k == "1",
        None => data && set.is_some_and(|s| !s.is_empty() && s != "none"),
    }
}

/// The options of the view, read from the URL (`?missing=exclude&judge=...&drop=q1,q2&w=q1/k1=2`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewOptions {
    pub missing: MissingPolicy,
    pub judge: Option<String>,
    /// Questions left out of every number (`repoprobe score --drop-question`), sorted, unique.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// Weight rules (`repoprobe score --weight`), in force order: `QUESTION/ITEM=W`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<String>,
    /// The bundled set counts beside the user's files (see [`counted`]); not a scoring option,
    /// but a report is for one set of files, so it is part of what a report answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_bundled: bool,
}

/// The `drop` parameter of the URL: comma-separated question ids → sorted, unique, no blanks.
/// (`bin/repoprobe-worker-start.js` reads it the same way for the first load.)
pub fn parse_drop(param: &str) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = param
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    set.into_iter().collect()
}

/// The `w` parameter of the URL: comma-separated weight rules, each in the form the CLI prints
/// it, a later rule for the same question and item replacing the earlier. A rule that does not
/// parse is kept as written: scoring then says what is wrong with it.
pub fn parse_weights(param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in param.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let rule = WeightRule::parse(text).map_or_else(|_| text.to_string(), |r| r.to_string());
        let target = selector(&rule).to_string();
        out.retain(|r| selector(r) != target);
        out.push(rule);
    }
    out
}

/// `QUESTION/ITEM` of a rule: what it applies to.
fn selector(rule: &str) -> &str {
    rule.rsplit_once('=').map_or(rule, |(s, _)| s)
}

/// `rules` with the rule for `selector` (`QUESTION/ITEM`) set to `weight`, or removed.
pub fn set_weight(rules: &[String], target: &str, weight: Option<u32>) -> Vec<String> {
    let mut out: Vec<String> = rules
        .iter()
        .filter(|r| selector(r) != target)
        .cloned()
        .collect();
    if let Some(w) = weight {
        out.push(format!("{target}={w}"));
    }
    out
}

/// The weight each checklist item of `q` has under the URL's rules (a rule that does not parse
/// changes nothing here; the tables say what is wrong with it). The rule that wins is the core's
/// (`weights::in_force`), the one `score` applies.
pub fn weights_in_force(rules: &[String], q: &Question) -> Vec<u32> {
    let parsed: Vec<WeightRule> = rules
        .iter()
        .filter_map(|r| WeightRule::parse(r).ok())
        .collect();
    weights::in_force(&parsed, q)
}

/// The CLI's defaults, so that the site shows what `repoprobe score` prints; an error names a
/// weight rule that does not parse.
pub fn score_options(o: &ViewOptions) -> Result<ScoreOptions, String> {
    Ok(ScoreOptions {
        missing: o.missing,
        judge: o.judge.clone(),
        items: true,
        drop_questions: o.drop.iter().cloned().collect(),
        weights: o
            .weights
            .iter()
            .map(|r| WeightRule::parse(r))
            .collect::<Result<_, _>>()?,
        ..ScoreOptions::default()
    })
}

/// Whether the worker answers a report in two steps, the tables first (scored without the
/// bootstrap) and their 95 % intervals in a second answer: when the bootstrap of `quick` (a
/// report scored with `bootstrap: 0`) under `options` would be long. Its cost grows with the
/// rows × the questions × the resamples (1,000 by default); from a million on, ~10 ms in the
/// worker's wasm, the tables are not held back for it. The numbers are the same either way:
/// the bootstrap only adds the intervals (`intervals_are_all_the_bootstrap_adds`).
pub fn defer_intervals(quick: &ScoreReport, options: &ScoreOptions) -> bool {
    /// Rows × questions × resamples from which the intervals come in a second answer.
    const DEFER_AT: u64 = 1_000_000;
    let questions = quick
        .models
        .iter()
        .map(|m| m.benchmark_questions)
        .max()
        .unwrap_or(0);
    (quick.models.len() as u64)
        .saturating_mul(questions as u64)
        .saturating_mul(u64::from(options.bootstrap))
        >= DEFER_AT
}

/// Total-score histogram (s = 0..=10) of one (model, judge).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub model: String,
    pub judge: String,
    pub counts: Vec<usize>,
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
    pub histograms: Vec<Histogram>,
    /// Per-model evidence of the runs (cost, tokens, turns, edits): the leaderboard's optional
    /// columns.
    pub evidence: Vec<ModelEvidence>,
    /// Valid records per kind (bundle key) of each file, parallel to `files`, kinds with none
    /// left out: what each file gave, so that an empty view can say why per file.
    #[serde(default)]
    pub per_file: Vec<Vec<(String, usize)>>,
}

impl Snapshot {
    pub fn of(l: &Loaded) -> Snapshot {
        let d = &l.dataset;
        let mut hist: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
        for j in &d.judgments {
            let s: u32 = j.items.iter().map(|i| i.score).sum();
            hist.entry((&j.model, &j.judge))
                .or_insert_with(|| vec![0; 11])[s.min(10) as usize] += 1;
        }
        Snapshot {
            files: l.files.clone(),
            issues: l.issues.clone(),
            notes: l.notes.clone(),
            counts: RecordKind::ALL
                .iter()
                .map(|&k| (k.bundle_key().to_string(), d.count(k)))
                .collect(),
            questions: d.questions.clone(),
            reported: d.reported.clone(),
            histograms: hist
                .into_iter()
                .map(|((m, j), counts)| Histogram {
                    model: m.into(),
                    judge: j.into(),
                    counts,
                })
                .collect(),
            evidence: evidence(&d.answers),
            per_file: per_file(l),
        }
    }

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

/// Valid records per kind of each file of a load (from the records' spans; a load that kept
/// none says nothing).
fn per_file(l: &Loaded) -> Vec<Vec<(String, usize)>> {
    let Some(spans) = l.dataset.spans.as_ref() else {
        return Vec::new();
    };
    let n = l.files.len();
    let by_kind: Vec<(RecordKind, Vec<usize>)> = RecordKind::ALL
        .iter()
        .map(|&k| (k, spans.per_file(k, n)))
        .collect();
    (0..n)
        .map(|i| {
            by_kind
                .iter()
                .filter(|(_, c)| c[i] > 0)
                .map(|(k, c)| (k.bundle_key().to_string(), c[i]))
                .collect()
        })
        .collect()
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texts_error: Option<String>,
}

impl QuestionData {
    pub fn of(d: &Dataset, id: &str) -> QuestionData {
        let answers: Vec<Answer> = d
            .answers
            .iter()
            .filter(|a| a.question_id == id)
            .cloned()
            .collect();
        QuestionData {
            id: id.to_string(),
            answers_md: answers
                .iter()
                .map(|a| markdown::parse(a.answer.as_deref().unwrap_or_default()))
                .collect(),
            reference_md: d
                .questions
                .iter()
                .find(|q| q.id == id)
                .map(|q| markdown::parse(&q.reference_answer)),
            judgments: d
                .judgments
                .iter()
                .filter(|j| j.question_id == id)
                .cloned()
                .collect(),
            answers,
            texts_error: None,
        }
    }
}

/// One read of a file that serves several records' byte ranges (see [`batch_ranges`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub start: u64,
    pub end: u64,
    /// Indices into the ranges given, in the order of their starts.
    pub members: Vec<usize>,
}

/// Groups byte ranges `[start, end)` of one file into fewer reads: each read of a `Blob` slice
/// costs a round trip to the browser's file thread, so ranges less than `gap` bytes apart share
/// one read, as long as it stays within `max` bytes (a range longer than `max` is a read of its
/// own). Overlapping ranges are allowed; an empty or reversed range is a read of nothing.
pub fn batch_ranges(ranges: &[(u64, u64)], gap: u64, max: u64) -> Vec<Batch> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].0, ranges[i].1));
    let mut out: Vec<Batch> = Vec::new();
    for i in order {
        let (start, end) = (ranges[i].0, ranges[i].1.max(ranges[i].0));
        match out.last_mut() {
            Some(b)
                if start <= b.end.saturating_add(gap)
                    && end.max(b.end).saturating_sub(b.start) <= max =>
            {
                b.end = b.end.max(end);
                b.members.push(i);
            }
            _ => out.push(Batch {
                start,
                end,
                members: vec![i],
            }),
        }
    }
    out
}

/// A request from the page. `Add` comes with the files' `Blob`s beside the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Externally tagged: serde reads internally tagged enums through a buffer that cannot turn the
// string keys of a JSON object back into numbers (`Spread::per_run`).
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Files to add to those the worker holds (their `Blob`s travel beside the JSON: handles
    /// to the browser's copy, which the worker reads as streams, never whole).
    Add {
        names: Vec<String>,
        /// Where each file came from (by position; `dropped` when not given).
        #[serde(default)]
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
    Question {
        id: String,
    },
    /// Per-item attainment and agreement under these options (large, so only when a view needs
    /// it), with the attainment per model of `model` only: every model's would be rows × models
    /// (~20 MB of JSON for 100 models on 1,400 questions), and one view shows one model's.
    Items {
        options: ViewOptions,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    Paired {
        options: ViewOptions,
        a: String,
        b: String,
    },
}

/// The worker's answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// Sent by the worker's start script (JavaScript), before its wasm runs: the files of the
    /// URL's `?set=` and `?data=` it fetched, and what it could not fetch. Their `Loaded` follows.
    Started {
        files: Vec<StartFile>,
        /// What could not be fetched that is not a `?data=` URL (the manifest, the bundled set,
        /// the worker's own wasm), in words.
        failures: Vec<String>,
        /// The `?data=` URLs that could not be fetched.
        #[serde(default)]
        failed: Vec<FetchFailure>,
        /// The bundled set asked for, if any.
        #[serde(default)]
        set: Option<BundledSet>,
    },
    /// The files' data and the report under `options` (those of the `Add` request).
    Loaded {
        options: ViewOptions,
        snapshot: Snapshot,
        report: Result<ScoreReport, String>,
        /// The report's bootstrap intervals are still being computed (see
        /// [`defer_intervals`]): a `Report` for the same options brings them.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        intervals_pending: bool,
    },
    Report {
        options: ViewOptions,
        report: Result<ScoreReport, String>,
        /// As in `Loaded`: a second `Report` for the same options brings the intervals.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        intervals_pending: bool,
    },
    Question(QuestionData),
    Paired {
        options: ViewOptions,
        a: String,
        b: String,
        report: Result<ScoreReport, String>,
    },
    /// Hex SHA-256 of files added, by name: sent after the tables, as each is known (the
    /// worker hashes in the background).
    Hashes(Vec<(String, String)>),
    Items {
        options: ViewOptions,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        items: Vec<repoprobe_core::metrics::items::ItemRow>,
    },
}

/// Hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Lower-case hex of a digest (the worker hashes files chunk by chunk as it reads them).
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::{LoadOptions, SourceFile, load, score};

    const FILES: [(&str, &[u8]); 4] = [
        (
            "benchmark.jsonl",
            include_bytes!("../testdata/golden/benchmark.jsonl"),
        ),
        (
            "answers.jsonl",
            include_bytes!("../testdata/golden/answers.jsonl"),
        ),
        (
            "judgments.jsonl",
            include_bytes!("../testdata/golden/judgments.jsonl"),
        ),
        (
            "scalar_judgments.jsonl",
            include_bytes!("../testdata/golden/scalar_judgments.jsonl"),
        ),
    ];

    #[test]
    fn every_response_reads_back_as_it_was_written() {
        let sources: Vec<SourceFile> = FILES
            .iter()
            .map(|(name, bytes)| SourceFile { name, bytes })
            .collect();
        let l = load(&sources, LoadOptions::default());
        let options = ViewOptions::default();
        let report = score(&l.dataset, &l.issues, &score_options(&options).unwrap())
            .map_err(|e| e.to_string());
        let responses = [
            Response::Loaded {
                options: options.clone(),
                snapshot: Snapshot::of(&l),
                report: report.clone(),
                intervals_pending: false,
            },
            Response::Loaded {
                options: options.clone(),
                snapshot: Snapshot::of(&l),
                report: report.clone(),
                intervals_pending: true,
            },
            Response::Report {
                options: options.clone(),
                report: report.clone(),
                intervals_pending: false,
            },
            Response::Report {
                options: options.clone(),
                report: report.clone(),
                intervals_pending: true,
            },
            Response::Question(QuestionData::of(&l.dataset, "q1")),
            Response::Question(QuestionData {
                texts_error: Some("1 answer text(s) could not be read back".into()),
                ..QuestionData::of(&l.dataset, "q2")
            }),
            Response::Paired {
                options,
                a: "A".into(),
                b: "B".into(),
                report,
            },
        ];
        for r in responses {
            let text = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Response>(&text).unwrap(), r);
        }
        let req = Request::Add {
            names: vec!["x".into()],
            origins: vec![Origin::Dropped],
            options: ViewOptions {
                keep_bundled: true,
                ..ViewOptions::default()
            },
        };
        assert_eq!(
            serde_json::from_str::<Request>(&serde_json::to_string(&req).unwrap()).unwrap(),
            req
        );
    }

    fn golden() -> repoprobe_core::Loaded {
        let sources: Vec<SourceFile> = FILES
            .iter()
            .map(|(name, bytes)| SourceFile { name, bytes })
            .collect();
        load(&sources, LoadOptions::default())
    }

    #[test]
    fn intervals_are_all_the_bootstrap_adds() {
        // The tables the worker answers first (no bootstrap) are those of the full report but
        // for the intervals and the policy's count of resamples.
        let l = golden();
        for options in [
            ViewOptions::default(),
            ViewOptions {
                missing: MissingPolicy::Exclude,
                ..ViewOptions::default()
            },
        ] {
            let full_options = score_options(&options).unwrap();
            let full = score(&l.dataset, &l.issues, &full_options).unwrap();
            assert!(full.models.iter().any(|m| m.ci95.is_some()));
            let quick = score(
                &l.dataset,
                &l.issues,
                &ScoreOptions {
                    bootstrap: 0,
                    ..full_options
                },
            )
            .unwrap();
            let mut bare = full.clone();
            bare.policy.bootstrap = 0;
            for m in &mut bare.models {
                m.ci95 = None;
            }
            assert_eq!(quick, bare);
        }
    }

    #[test]
    fn only_a_long_bootstrap_is_deferred() {
        let l = golden();
        let o = score_options(&ViewOptions::default()).unwrap();
        let quick = score(
            &l.dataset,
            &l.issues,
            &ScoreOptions {
                bootstrap: 0,
                ..o.clone()
            },
        )
        .unwrap();
        assert!(!quick.models.is_empty());
        assert!(!defer_intervals(&quick, &o), "a few questions: one answer");
        assert!(!defer_intervals(
            &quick,
            &ScoreOptions {
                bootstrap: 0,
                ..o.clone()
            }
        ));
        let mut large = quick.clone();
        let row = large.models[0].clone();
        large.models = vec![row; 20];
        for m in &mut large.models {
            m.benchmark_questions = 500;
        }
        assert!(
            defer_intervals(&large, &o),
            "20 rows × 500 questions × 1,000 resamples"
        );
        assert!(
            !defer_intervals(&ScoreReport::empty(&o), &o),
            "nothing to score"
        );
    }

    #[test]
    fn the_start_scripts_message_reads_as_started() {
        // What bin/repoprobe-worker-start.js posts (JSON.stringify of this shape).
        let text = r#"{"started":{"files":[{"name":"public-data/sample/benchmark.jsonl","origin":"bundled","size":11155},{"name":"x.json","origin":"url","size":2}],"failures":["y.json: HTTP 404 for y.json"]}}"#;
        let r: Response = serde_json::from_str(text).unwrap();
        assert_eq!(
            r,
            Response::Started {
                files: vec![
                    StartFile {
                        name: "public-data/sample/benchmark.jsonl".into(),
                        origin: Origin::Bundled,
                        size: 11155
                    },
                    StartFile {
                        name: "x.json".into(),
                        origin: Origin::Url,
                        size: 2
                    },
                ],
                failures: vec!["y.json: HTTP 404 for y.json".into()],
                failed: Vec::new(),
                set: None,
            }
        );
        // A `?data=` URL it could not fetch.
        let text = r#"{"started":{"files":[],"failures":[],"failed":[{"url":"https://x.org/j.jsonl","reason":"the server answered HTTP 404 Not Found"}]}}"#;
        let Response::Started { failed, .. } = serde_json::from_str(text).unwrap() else {
            panic!("a started response");
        };
        assert_eq!(
            failed,
            [FetchFailure {
                url: "https://x.org/j.jsonl".into(),
                reason: "the server answered HTTP 404 Not Found".into()
            }]
        );
        // With the set it fetched.
        let text = r#"{"started":{"files":[],"failures":[],"set":{"name":"paper","label":"The paper","case_studies":true}}}"#;
        let Response::Started { set, .. } = serde_json::from_str(text).unwrap() else {
            panic!("a started response");
        };
        assert_eq!(
            set,
            Some(BundledSet {
                name: "paper".into(),
                label: "The paper".into(),
                case_studies: true
            })
        );
        // And the `add` request it hands to the wasm, with the options it read from the URL.
        let add = r#"{"add":{"names":["a","b"],"origins":["bundled","url"],"options":{"missing":"exclude","judge":null,"keep_bundled":true}}}"#;
        assert_eq!(
            serde_json::from_str::<Request>(add).unwrap(),
            Request::Add {
                names: vec!["a".into(), "b".into()],
                origins: vec![Origin::Bundled, Origin::Url],
                options: ViewOptions {
                    missing: MissingPolicy::Exclude,
                    judge: None,
                    drop: Vec::new(),
                    weights: Vec::new(),
                    keep_bundled: true,
                },
            }
        );
        // With the questions to drop and the weight rules, as the start script reads them from
        // the URL.
        let add = r#"{"add":{"names":["a"],"options":{"missing":"zero","judge":null,"drop":["q1","q2"],"weights":["*/@clarity=0","q1/k1=2"]}}}"#;
        let Request::Add { options, .. } = serde_json::from_str::<Request>(add).unwrap() else {
            panic!("an add request");
        };
        assert_eq!(options.drop, ["q1", "q2"]);
        assert_eq!(parse_drop(" q2,q1,,q2 "), ["q1", "q2"]);
        let o = score_options(&options).unwrap();
        assert_eq!(
            o.drop_questions.into_iter().collect::<Vec<_>>(),
            ["q1", "q2"]
        );
        assert_eq!(
            o.weights
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["*/@clarity=0", "q1/k1=2"]
        );
    }

    #[test]
    fn weight_rules_of_the_url_are_canonical_and_settable() {
        // Spaces go, a later rule for the same item replaces the earlier, a bad one stays as
        // written so that scoring can say what is wrong with it.
        assert_eq!(
            parse_weights(" q1/k1 = 2 ,*/@clarity=0,, q1/k1=3,oops"),
            ["*/@clarity=0", "q1/k1=3", "oops"]
        );
        let bad = ViewOptions {
            weights: parse_weights("q1/k1=x"),
            ..ViewOptions::default()
        };
        assert!(
            score_options(&bad)
                .unwrap_err()
                .contains("not a whole number")
        );
        let rules = parse_weights("*/@clarity=0,q1/k1=3");
        assert_eq!(
            set_weight(&rules, "q1/k1", Some(5)),
            ["*/@clarity=0", "q1/k1=5"]
        );
        assert_eq!(
            set_weight(&rules, "q2/k2", Some(0)),
            ["*/@clarity=0", "q1/k1=3", "q2/k2=0"]
        );
        assert_eq!(set_weight(&rules, "*/@clarity", None), ["q1/k1=3"]);
        // The weights the question view shows and the difficulty sort uses: a question's own
        // rule beats `*`, a rule that does not parse changes nothing.
        let sources: Vec<SourceFile> = FILES
            .iter()
            .map(|(name, bytes)| SourceFile { name, bytes })
            .collect();
        let l = load(&sources, LoadOptions::default());
        let q = |id: &str| l.dataset.questions.iter().find(|q| q.id == id).unwrap();
        let rules = parse_weights("*/@knowledge=1,q1/k1=3,oops");
        assert_eq!(weights_in_force(&rules, q("q1")), [3, 1, 1]);
        assert_eq!(weights_in_force(&rules, q("q2")), [1, 1, 1]);
        assert_eq!(weights_in_force(&[], q("q2")), [5, 4, 1]);
    }

    #[test]
    fn added_files_replace_the_bundled_set_unless_it_is_kept() {
        // The URL: `?data=` alone replaces, `?set=NAME&data=` keeps, `keep=` says it outright.
        assert!(!keep_bundled(None, None, false));
        assert!(!keep_bundled(None, Some("paper"), false));
        assert!(!keep_bundled(None, None, true));
        assert!(keep_bundled(None, Some("paper"), true));
        assert!(!keep_bundled(None, Some("none"), true));
        assert!(keep_bundled(Some("1"), None, false));
        assert!(!keep_bundled(Some("0"), Some("paper"), true));
        // Which files count.
        assert!(
            counted(Origin::Bundled, false, false),
            "nothing of the user's yet"
        );
        assert!(
            !counted(Origin::Bundled, false, true),
            "the user's files replace it"
        );
        assert!(counted(Origin::Bundled, true, true), "kept");
        for o in [Origin::Dropped, Origin::Url] {
            assert!(counted(o, false, true) && counted(o, true, true));
        }
    }

    #[test]
    fn near_ranges_share_one_read_and_far_ones_do_not() {
        // Out of order, overlapping, one far away, one too long to join.
        let ranges = [
            (100, 150),
            (0, 40),
            (45, 90),
            (10_000, 10_010),
            (140, 160),
            (170, 5_000),
        ];
        let b = batch_ranges(&ranges, 10, 1_000);
        assert_eq!(
            b,
            [
                Batch {
                    start: 0,
                    end: 160,
                    members: vec![1, 2, 0, 4]
                },
                Batch {
                    start: 170,
                    end: 5_000,
                    members: vec![5]
                },
                Batch {
                    start: 10_000,
                    end: 10_010,
                    members: vec![3]
                },
            ]
        );
        // Every range lies inside the read that serves it.
        for batch in &b {
            for &i in &batch.members {
                assert!(batch.start <= ranges[i].0 && ranges[i].1 <= batch.end);
            }
        }
        // With no gap allowed only touching ranges join; a reversed range reads nothing.
        let b = batch_ranges(&[(0, 10), (10, 20), (21, 30), (50, 40)], 0, u64::MAX);
        assert_eq!(
            b.iter().map(|b| (b.start, b.end)).collect::<Vec<_>>(),
            [(0, 20), (21, 30), (50, 50)]
        );
        assert!(batch_ranges(&[], 10, 10).is_empty());
        // Near the end of the address space nothing overflows.
        let b = batch_ranges(
            &[(u64::MAX - 5, u64::MAX), (u64::MAX - 2, u64::MAX)],
            u64::MAX,
            u64::MAX,
        );
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_snapshot_counts_histograms_and_questions() {
        let sources: Vec<SourceFile> = FILES
            .iter()
            .map(|(name, bytes)| SourceFile { name, bytes })
            .collect();
        let s = Snapshot::of(&load(&sources, LoadOptions::default()));
        assert_eq!(s.questions.len(), 3);
        assert!(s.counts.contains(&("judgments".to_string(), 10)));
        let a = s
            .histograms
            .iter()
            .find(|h| h.model == "A" && h.judge == "J")
            .unwrap();
        // A/J totals: 10, 8, 6, 5, 1, 0.
        assert_eq!(a.counts, vec![1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1]);
        assert_eq!(
            s.issues.len(),
            6,
            "every issue of the golden files travels with the snapshot"
        );
    }
}
