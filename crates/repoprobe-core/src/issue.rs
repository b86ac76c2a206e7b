//! Problems found while loading, as data: every bad record becomes an [`Issue`] with the file,
//! where in it, and a reason a person can act on. Nothing here aborts a load.

use crate::sort::SharedSort;
use serde::{Deserialize, Serialize};

/// How bad an issue is; decides the exit code of `repoprobe validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Part of a record is ignored (an evidence entry that is no repository path); the record
    /// is kept and counted.
    Warning,
    /// One record is invalid or a duplicate; it is left out, the rest of the file loads.
    Record,
    /// The file (or the rest of it) cannot be read at all: not UTF-8, not JSON, unknown shape.
    File,
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Issue {
    pub file: String,
    /// Where in the file: a record (and a path inside it), a syntax error's line and column, …
    pub location: Place,
    /// What the problem is, set where it is found: what a summary counts ([`FileIssues`]).
    pub kind: IssueKind,
    pub message: String,
    pub severity: Severity,
    /// For a problem that stopped the file's reading: how many records were read before it.
    #[serde(default)]
    pub read_before: usize,
}

impl Issue {
    /// A problem of kind `kind` at `location` of `file`.
    pub fn new(
        file: impl Into<String>,
        location: Place,
        kind: IssueKind,
        message: impl Into<String>,
        severity: Severity,
    ) -> Issue {
        Issue {
            file: file.into(),
            location,
            kind,
            message: message.into(),
            severity,
            read_before: 0,
        }
    }
}

/// What a problem is, in a few words a reader knows ([`IssueKind::words`]): the kinds a summary
/// lists ([`FileIssues::line`]). Set where the problem is found, never read back from its
/// message (the tidy rule `no_string_kinds` holds that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    NotJson,
    EmptyFile,
    NotUtf8,
    NestedTooDeep,
    NotAJsonNumber,
    CutShort,
    BrokenJson,
    UnreadableFile,
    UnknownFormat,
    UnsupportedVersion,
    NotAnObject,
    NotARecord,
    DuplicateKey,
    DuplicateRecord,
    UnknownQuestion,
    JudgmentOfFailedRun,
    InvalidChecklist,
    InvalidQuestion,
    ScoreNotAllowed,
    ItemNotInChecklist,
    ItemScoredTwice,
    MissingItem,
    ScoreOutOfRange,
    MissingField,
    WrongType,
    ValueNotAllowed,
    InvalidReview,
    IgnoredEntry,
    MissingFile,
    #[serde(other)]
    Other,
}

impl IssueKind {
    /// The kind in a few words, as a summary says it.
    pub fn words(self) -> &'static str {
        match self {
            IssueKind::NotJson => "not JSON",
            IssueKind::EmptyFile => "empty file",
            IssueKind::NotUtf8 => "not UTF-8 text",
            IssueKind::NestedTooDeep => "nested too deep",
            IssueKind::NotAJsonNumber => "not a JSON number",
            IssueKind::CutShort => "cut short",
            IssueKind::BrokenJson => "broken JSON",
            IssueKind::UnreadableFile => "unreadable file",
            IssueKind::UnknownFormat => "unknown file format",
            IssueKind::UnsupportedVersion => "unsupported version",
            IssueKind::NotAnObject => "not a JSON object",
            IssueKind::NotARecord => "not a RepoProbe record",
            IssueKind::DuplicateKey => "duplicate key",
            IssueKind::DuplicateRecord => "duplicate record",
            IssueKind::UnknownQuestion => "unknown question",
            IssueKind::JudgmentOfFailedRun => "judgment of a failed run",
            IssueKind::InvalidChecklist => "invalid checklist",
            IssueKind::InvalidQuestion => "invalid question",
            IssueKind::ScoreNotAllowed => "score not allowed",
            IssueKind::ItemNotInChecklist => "item not in the checklist",
            IssueKind::ItemScoredTwice => "item scored twice",
            IssueKind::MissingItem => "missing item",
            IssueKind::ScoreOutOfRange => "score out of range",
            IssueKind::MissingField => "missing field",
            IssueKind::WrongType => "wrong type",
            IssueKind::ValueNotAllowed => "value not allowed",
            IssueKind::InvalidReview => "invalid review",
            IssueKind::IgnoredEntry => "entry ignored",
            IssueKind::MissingFile => "missing file",
            IssueKind::Other => "other problem",
        }
    }
}

impl std::fmt::Display for IssueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.words())
    }
}

/// A problem found in one record by a check that knows only the record (`crate::validate`), or
/// by one that knows the others (`crate::dataset`): its kind and its words, before it is
/// located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: IssueKind,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

impl Problem {
    pub fn new(kind: IssueKind, message: impl Into<String>) -> Problem {
        Problem {
            kind,
            message: message.into(),
        }
    }

    /// The same problem with its message put into words around it (`invalid judgment: …`).
    pub fn worded(self, f: impl FnOnce(String) -> String) -> Problem {
        Problem {
            kind: self.kind,
            message: f(self.message),
        }
    }
}

/// Where in its file a problem is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// The file as a whole (`file`).
    File,
    /// A directory given as input (`directory`).
    Directory,
    /// A trajectory index (`index`).
    Index,
    /// A byte offset: where reading stopped (`byte 1024`).
    Byte(u64),
    /// A line and column: where the bytes stopped being JSON or UTF-8 (`line 4, column 7`).
    Position { line: usize, column: usize },
    /// A record, and a path inside it (serde's, `items[1].score`; empty for the record
    /// itself): `line 12, items[1].score` in JSONL, `$.judgments[3].items[1].score` in JSON.
    Record { record: RecordAt, path: String },
}

/// Where a record is in its file: the owned form of [`crate::load::Location`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordAt {
    /// The whole file (`$`), or its container object (`$.version`).
    Root,
    /// A line of a JSONL file (1-based).
    Line(usize),
    /// `$[i]` of a JSON array, or `$.key[i]` of a bundle's array.
    Index { key: Option<String>, index: usize },
}

impl Place {
    /// The record `at`, whole.
    pub fn record(at: impl Into<RecordAt>) -> Place {
        Place::Record {
            record: at.into(),
            path: String::new(),
        }
    }

    /// The path `path` inside the record `at` (the record itself when `path` is empty or `.`).
    pub fn inside(at: impl Into<RecordAt>, path: &str) -> Place {
        let path = if path == "." { "" } else { path };
        Place::Record {
            record: at.into(),
            path: path.to_string(),
        }
    }

    /// The record this place is in, if it is in one.
    pub fn record_at(&self) -> Option<&RecordAt> {
        match self {
            Place::Record { record, .. } => Some(record),
            _ => None,
        }
    }
}

impl std::fmt::Display for RecordAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordAt::Root => f.write_str("$"),
            RecordAt::Line(n) => write!(f, "line {n}"),
            RecordAt::Index { key: None, index } => write!(f, "$[{index}]"),
            RecordAt::Index {
                key: Some(key),
                index,
            } => write!(f, "$.{key}[{index}]"),
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::File => f.write_str("file"),
            Place::Directory => f.write_str("directory"),
            Place::Index => f.write_str("index"),
            Place::Byte(at) => write!(f, "byte {at}"),
            Place::Position { line, column } => write!(f, "line {line}, column {column}"),
            Place::Record { record, path } if path.is_empty() => write!(f, "{record}"),
            Place::Record {
                record: record @ RecordAt::Line(_),
                path,
            } => write!(f, "{record}, {path}"),
            Place::Record { record, path } if path.starts_with('[') => write!(f, "{record}{path}"),
            Place::Record { record, path } => write!(f, "{record}.{path}"),
        }
    }
}

/// The problems of one file, counted: what a summary says of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIssues {
    pub file: String,
    /// Records left out (a record with several problems counts once).
    pub records: usize,
    /// The first problem that stopped the file's reading (`Severity::File`), if any.
    pub unreadable: Option<Issue>,
    /// Whether some records were read before that problem.
    pub read_in_part: bool,
    /// Each kind of problem ([`IssueKind::words`]) of the records left out, with how many issues are of
    /// it, most frequent first (ties in the order first met).
    pub kinds: Vec<(IssueKind, usize)>,
    /// All issues of the file.
    pub issues: usize,
    /// Of them, warnings: a part of a record ignored, the record counted.
    #[serde(default)]
    pub warnings: usize,
}

/// Issues grouped per file, in the order the files first appear, each counted by kind: what the
/// CLI and the site say in one line per file ([`FileIssues::line`]).
pub fn by_file(issues: &[Issue]) -> Vec<FileIssues> {
    let mut out: Vec<FileIssues> = Vec::new();
    let mut records: Vec<std::collections::BTreeSet<Option<&RecordAt>>> = Vec::new();
    for i in issues {
        let at = match out.iter().position(|f| f.file == i.file) {
            Some(at) => at,
            None => {
                out.push(FileIssues {
                    file: i.file.clone(),
                    records: 0,
                    unreadable: None,
                    read_in_part: false,
                    kinds: Vec::new(),
                    issues: 0,
                    warnings: 0,
                });
                records.push(Default::default());
                out.len() - 1
            }
        };
        let f = &mut out[at];
        f.issues += 1;
        match i.severity {
            Severity::File if f.unreadable.is_none() => {
                f.read_in_part = i.read_before > 0;
                f.unreadable = Some(i.clone());
            }
            Severity::File => {}
            Severity::Warning => f.warnings += 1,
            Severity::Record => {
                records[at].insert(i.location.record_at());
                match f.kinds.iter_mut().find(|(x, _)| *x == i.kind) {
                    Some((_, n)) => *n += 1,
                    None => f.kinds.push((i.kind, 1)),
                }
            }
        }
    }
    for (f, r) in out.iter_mut().zip(records) {
        f.records = r.len();
        // Stable: ties keep the order first met.
        f.kinds.shared_sort_by_key(|k| std::cmp::Reverse(k.1));
    }
    out
}

impl FileIssues {
    /// The file's name without its directories (a URL's or a path's last part).
    pub fn short_name(&self) -> &str {
        let name = self.file.trim_end_matches('/');
        name.rsplit('/').next().unwrap_or(name)
    }

    /// The kinds in words, each with its count when there are several kinds and more than one
    /// of it: `unknown question` or `score not allowed ×2, unknown question`.
    pub fn kinds_in_words(&self) -> String {
        let several = self.kinds.len() > 1;
        self.kinds
            .iter()
            .map(|(k, n)| match n {
                1 => k.words().to_string(),
                n if several => format!("{k} ×{n}"),
                _ => k.words().to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// One line for the file, e.g. `3 records of judgments.jsonl were not counted (unknown
    /// question, score not allowed)` or `garbage.bin could not be read: not JSON: … (line 1,
    /// column 1)`. Untrusted text (the name, quoted values) is in it as given: render it as
    /// text only.
    pub fn line(&self) -> String {
        let name = self.short_name();
        let mut out = String::new();
        if let Some(u) = &self.unreadable {
            let how = if self.read_in_part {
                "was read only in part"
            } else {
                "could not be read"
            };
            out += &format!("{name} {how}: {} ({})", u.message, u.location);
        }
        if self.records > 0 {
            if !out.is_empty() {
                out += "; ";
            }
            let r = if self.records == 1 {
                "1 record".to_string()
            } else {
                format!("{} records", self.records)
            };
            let were = if self.records == 1 { "was" } else { "were" };
            out += &format!(
                "{r} of {name} {were} not counted ({})",
                self.kinds_in_words()
            );
        }
        if self.warnings > 0 {
            if !out.is_empty() {
                out += "; ";
            }
            let w = if self.warnings == 1 {
                "1 warning".to_string()
            } else {
                format!("{} warnings", self.warnings)
            };
            out += &format!("{w} in {name} (part of a record ignored, the record counted)");
        }
        out
    }
}

/// The issues in one sentence per file (see [`FileIssues::line`]).
pub fn summary_lines(issues: &[Issue]) -> Vec<String> {
    by_file(issues).iter().map(FileIssues::line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BENCH: &str = include_str!("../../../testdata/golden/benchmark.jsonl");
    const J: &str = r#"{"question_id": "q1", "model": "A", "attempt": 0, "judge": "J", "judge_run": 0, "items": [{"id": "k1", "rationale": "r", "score": 5}, {"id": "k2", "rationale": "r", "score": 4}, {"id": "clarity", "rationale": "r", "score": 1}]}"#;

    /// The issues of `name` holding `bytes`, loaded after the golden benchmark.
    fn issues_of(name: &str, bytes: &[u8]) -> Vec<Issue> {
        let files = [
            crate::SourceFile {
                name: "benchmark.jsonl",
                bytes: BENCH.as_bytes(),
            },
            crate::SourceFile { name, bytes },
        ];
        let l = crate::load(&files, crate::LoadOptions::default());
        assert!(l.issues.iter().all(|i| i.file == name), "{:?}", l.issues);
        l.issues
    }

    fn one_line(name: &str, bytes: &[u8]) -> String {
        let lines = summary_lines(&issues_of(name, bytes));
        assert_eq!(lines.len(), 1, "{lines:?}");
        lines[0].clone()
    }

    #[test]
    fn kinds_of_every_loader_message() {
        let deep = format!(
            "{{\"question_id\":\"q\",\"model\":\"m\",\"answer\":\"a\",\"agent\":{}{}}}\n",
            "[".repeat(300),
            "]".repeat(300)
        );
        let mut checklist: serde_json::Value =
            serde_json::from_str(BENCH.lines().next().unwrap()).unwrap();
        checklist["id"] = "q5".into();
        let k1 = checklist["checklist"][0].clone();
        let items = checklist["checklist"].as_array_mut().unwrap();
        for i in 0..4 {
            let mut k = k1.clone();
            k["id"] = format!("x{i}").into();
            items.insert(0, k);
        }
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("garbage.bin", b"\xd0\xcf\x11\xe0".to_vec(), "not JSON"),
            ("empty.jsonl", Vec::new(), "empty file"),
            ("latin1.json", b"[\"\xe9\"]".to_vec(), "not UTF-8 text"),
            ("cut.jsonl", J.as_bytes()[..100].to_vec(), "cut short"),
            ("deep.jsonl", deep.into_bytes(), "nested too deep"),
            (
                "nan.jsonl",
                J.replace("\"score\": 5", "\"score\": NaN").into_bytes(),
                "not a JSON number",
            ),
            (
                "nan.json",
                format!("[{}]", J.replace("\"score\": 4", "\"score\": -Infinity")).into_bytes(),
                "not a JSON number",
            ),
            (
                "types.jsonl",
                J.replace("\"judge_run\": 0", "\"judge_run\": \"zero\"")
                    .into_bytes(),
                "wrong type",
            ),
            (
                "bad.jsonl",
                J.replace("\"score\": 5", "\"score\": 1").into_bytes(),
                "score not allowed",
            ),
            (
                "q9.jsonl",
                J.replace("\"q1\"", "\"q9\"").into_bytes(),
                "unknown question",
            ),
            (
                "dup.jsonl",
                format!("{J}\n{J}\n").into_bytes(),
                "duplicate record",
            ),
            (
                "dupkey.jsonl",
                J.replace("\"model\": \"A\"", "\"model\": \"A\", \"model\": \"B\"")
                    .into_bytes(),
                "duplicate key",
            ),
            (
                "checklist.jsonl",
                checklist.to_string().into_bytes(),
                "invalid checklist",
            ),
            (
                "missing.jsonl",
                J.replace(r#", {"id": "k2", "rationale": "r", "score": 4}"#, "")
                    .into_bytes(),
                "missing item",
            ),
            (
                "package.json",
                br#"{"name": "x", "version": "1.0"}"#.to_vec(),
                "not a RepoProbe record",
            ),
            ("list.json", b"[[1]]".to_vec(), "not a JSON object"),
            (
                "other.json",
                br#"{"format": "zip", "judgments": []}"#.to_vec(),
                "unknown file format",
            ),
        ];
        for (name, bytes, want) in cases {
            let issues = issues_of(name, &bytes);
            assert!(!issues.is_empty(), "{name}: no issue");
            assert_eq!(issues[0].kind.words(), want, "{name}: {:?}", issues[0]);
        }
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_with_the_reason_and_where() {
        assert_eq!(
            one_line("garbage.bin", b"\xd0\xcf\x11\xe0"),
            "garbage.bin could not be read: not JSON: a RepoProbe file starts with `[`, `{` or a \
             JSON object per line, found byte 0xd0 (line 1, column 1)"
        );
        assert_eq!(
            one_line("dir/empty.jsonl", b""),
            "empty.jsonl could not be read: the file is empty: expected JSON or JSONL records (file)"
        );
        // Records before a break were read: "in part", and the message says how many. (In
        // JSONL a torn line is one record left out, the next lines are read.)
        let cut = format!("[{J},\n{}", &J[..100]);
        let line = one_line("cut.json", cut.as_bytes());
        assert!(
            line.starts_with("cut.json was read only in part: "),
            "{line}"
        );
        assert!(
            line.contains("the 1 record(s) before it were read"),
            "{line}"
        );
        let line = one_line("cut.jsonl", format!("{J}\n{}", &J[..100]).as_bytes());
        assert_eq!(line, "1 record of cut.jsonl was not counted (cut short)");
    }

    #[test]
    fn records_left_out_are_counted_once_each_with_their_kinds() {
        let text = [
            J.replace("\"q1\"", "\"q9\""),
            J.replace("\"score\": 5", "\"score\": 1"),
            // Two problems in one record: one record left out.
            J.replace("\"score\": 5", "\"score\": 2")
                .replace("\"score\": 4", "\"score\": 3")
                .replace("\"judge_run\": 0", "\"judge_run\": 1"),
            J.to_string(),
        ]
        .join("\n");
        let issues = issues_of("https://example.org/x/judgments.jsonl", text.as_bytes());
        assert_eq!(issues.len(), 4, "{issues:?}");
        let f = &by_file(&issues)[0];
        assert_eq!(f.records, 3);
        assert_eq!(f.issues, 4);
        assert!(f.unreadable.is_none());
        assert_eq!(
            f.line(),
            "3 records of judgments.jsonl were not counted (score not allowed ×3, unknown question)"
        );
        // One kind: no count beside it.
        assert_eq!(
            one_line("q9.jsonl", J.replace("\"q1\"", "\"q9\"").as_bytes()),
            "1 record of q9.jsonl was not counted (unknown question)"
        );
    }

    #[test]
    fn warnings_are_said_apart_from_records_left_out() {
        let mut q: serde_json::Value = serde_json::from_str(BENCH.lines().next().unwrap()).unwrap();
        q["id"] = "q8".into();
        q["checklist"][0]["evidence"] = serde_json::json!(["/abs", "ok.py"]);
        let text = format!("{q}\n{}", J.replace("\"q1\"", "\"q9\""));
        let issues = issues_of("w.jsonl", text.as_bytes());
        let f = &by_file(&issues)[0];
        assert_eq!((f.records, f.warnings, f.issues), (1, 1, 2));
        assert_eq!(
            f.line(),
            "1 record of w.jsonl was not counted (unknown question); 1 warning in w.jsonl (part \
             of a record ignored, the record counted)"
        );
    }

    #[test]
    fn files_in_the_order_first_met_and_locations_to_records() {
        let issue = |file: &str, location: Place, severity| {
            Issue::new(
                file,
                location,
                IssueKind::WrongType,
                "invalid type: string \"x\", expected u32",
                severity,
            )
        };
        let index = |key: Option<&str>, index| RecordAt::Index {
            key: key.map(str::to_string),
            index,
        };
        let issues = [
            issue(
                "b.json",
                Place::inside(index(None, 3), "items[1].score"),
                Severity::Record,
            ),
            issue(
                "a.json",
                Place::inside(index(Some("judgments"), 4), "score"),
                Severity::Record,
            ),
            issue(
                "b.json",
                Place::inside(index(None, 3), "judge_run"),
                Severity::Record,
            ),
            issue("b.json", Place::record(index(None, 4)), Severity::Record),
            issue(
                "a.json",
                Place::record(index(Some("judgments"), 4)),
                Severity::Record,
            ),
            issue(
                "c.jsonl",
                Place::inside(RecordAt::Line(7), "items"),
                Severity::Record,
            ),
            issue(
                "c.jsonl",
                Place::record(RecordAt::Line(7)),
                Severity::Record,
            ),
            issue(
                "d.json",
                Place::inside(RecordAt::Root, "judge_run"),
                Severity::Record,
            ),
        ];
        let shown: Vec<String> = issues.iter().map(|i| i.location.to_string()).collect();
        assert_eq!(
            shown,
            [
                "$[3].items[1].score",
                "$.judgments[4].score",
                "$[3].judge_run",
                "$[4]",
                "$.judgments[4]",
                "line 7, items",
                "line 7",
                "$.judge_run"
            ]
        );
        let got: Vec<(String, usize)> = by_file(&issues)
            .into_iter()
            .map(|f| (f.file, f.records))
            .collect();
        assert_eq!(
            got,
            [
                ("b.json".to_string(), 2),
                ("a.json".to_string(), 1),
                ("c.jsonl".to_string(), 1),
                ("d.json".to_string(), 1)
            ]
        );
        assert!(by_file(&[]).is_empty());
    }
}
