//! What the loader gives: the records (`Record`, `RecordKind`), where each was found
//! (`Location`, `Span`, `Located`) and the input files (`SourceFile`).

use crate::model::*;
use crate::sort::SharedSort;
use serde_json::value::RawValue;
use std::fmt;

/// One input file: a name for messages and its bytes. The core never opens files itself.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// The record kinds of docs/format.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Question,
    Answer,
    Judgment,
    ScalarJudgment,
    FailureLabel,
    Reported,
    Review,
}

/// Which of the fields that tell a record's kind it has: one rule for a record being loaded and
/// for a JSON value ([`RecordKind::of_value`]).
pub(super) struct Marks {
    pub(super) checklist: bool,
    pub(super) question: bool,
    pub(super) reference_answer: bool,
    pub(super) items: bool,
    pub(super) dimensions: bool,
    pub(super) mode: bool,
    pub(super) classifier: bool,
    pub(super) answer: bool,
    pub(super) question_id: bool,
    pub(super) error: bool,
    pub(super) reviewer: bool,
}

impl Marks {
    pub(super) fn kind(&self) -> Option<RecordKind> {
        if self.checklist || (self.question && self.reference_answer) {
            Some(RecordKind::Question)
        } else if self.items {
            Some(RecordKind::Judgment)
        } else if self.dimensions {
            Some(RecordKind::ScalarJudgment)
        } else if self.mode || self.classifier {
            Some(RecordKind::FailureLabel)
        } else if self.answer || (self.question_id && self.error) {
            Some(RecordKind::Answer)
        } else if self.reviewer {
            Some(RecordKind::Review)
        } else {
            None
        }
    }
}

/// How many record kinds there are (the length of [`RecordKind::ALL`]).
pub const KINDS: usize = 7;

impl RecordKind {
    pub const ALL: [RecordKind; KINDS] = [
        RecordKind::Question,
        RecordKind::Answer,
        RecordKind::Judgment,
        RecordKind::ScalarJudgment,
        RecordKind::FailureLabel,
        RecordKind::Reported,
        RecordKind::Review,
    ];

    pub fn noun(self) -> &'static str {
        match self {
            RecordKind::Question => "question",
            RecordKind::Answer => "answer",
            RecordKind::Judgment => "judgment",
            RecordKind::ScalarJudgment => "scalar judgment",
            RecordKind::FailureLabel => "failure-mode label",
            RecordKind::Reported => "reported value",
            RecordKind::Review => "review",
        }
    }

    /// The array of a results bundle that holds this kind.
    pub fn bundle_key(self) -> &'static str {
        match self {
            RecordKind::Question => "benchmark",
            RecordKind::Answer => "answers",
            RecordKind::Judgment => "judgments",
            RecordKind::ScalarJudgment => "scalar_judgments",
            RecordKind::FailureLabel => "failure_modes",
            RecordKind::Reported => "reported",
            // Not an array of the bundle (`reviews.jsonl` files hold them): the name of
            // `validate`'s count.
            RecordKind::Review => "reviews",
        }
    }

    /// The kind of a record given as JSON, told by the fields it has as the loader tells it
    /// (docs/format.md#loading-rules): what a journal of the CLI reads its records by.
    pub fn of_value(v: &serde_json::Value) -> Option<RecordKind> {
        let set = |k: &str| v.get(k).is_some_and(|x| !x.is_null());
        // `answer` and `error` count when present, even `null` (an answer that failed).
        let present = |k: &str| v.get(k).is_some();
        Marks {
            checklist: set("checklist"),
            question: set("question"),
            reference_answer: set("reference_answer"),
            items: set("items"),
            dimensions: set("dimensions"),
            mode: set("mode"),
            classifier: set("classifier"),
            answer: present("answer"),
            question_id: set("question_id"),
            error: present("error"),
            reviewer: set("reviewer"),
        }
        .kind()
    }

    pub(super) fn from_bundle_key(key: &str) -> Option<RecordKind> {
        RecordKind::ALL
            .into_iter()
            .filter(|k| *k != RecordKind::Review)
            .find(|k| k.bundle_key() == key)
    }
}

/// A parsed record of any kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Question(Question),
    Answer(Answer),
    Judgment(Judgment),
    ScalarJudgment(ScalarJudgment),
    FailureLabel(FailureLabel),
    Reported(ReportedValue),
    Review(Review),
}

impl Record {
    pub fn kind(&self) -> RecordKind {
        match self {
            Record::Question(_) => RecordKind::Question,
            Record::Answer(_) => RecordKind::Answer,
            Record::Judgment(_) => RecordKind::Judgment,
            Record::ScalarJudgment(_) => RecordKind::ScalarJudgment,
            Record::FailureLabel(_) => RecordKind::FailureLabel,
            Record::Reported(_) => RecordKind::Reported,
            Record::Review(_) => RecordKind::Review,
        }
    }
}

/// Where a record is in its file. Kept as data and only written out when an issue needs it:
/// formatting a location string for each of 50,000 valid records was a measurable cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The whole file is the record (`$`).
    Root,
    /// A line of a JSONL file (1-based).
    Line(usize),
    /// `$[i]` of a JSON array, or `$.key[i]` of a bundle's array.
    Index(Option<&'static str>, usize),
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Root => f.write_str("$"),
            Location::Line(n) => write!(f, "line {n}"),
            Location::Index(None, i) => write!(f, "$[{i}]"),
            Location::Index(Some(key), i) => write!(f, "$.{key}[{i}]"),
        }
    }
}

/// An issue's record ([`crate::issue::Place`]) names it so.
impl From<Location> for crate::issue::RecordAt {
    fn from(l: Location) -> crate::issue::RecordAt {
        match l {
            Location::Root => crate::issue::RecordAt::Root,
            Location::Line(n) => crate::issue::RecordAt::Line(n),
            Location::Index(key, index) => crate::issue::RecordAt::Index {
                key: key.map(str::to_string),
                index,
            },
        }
    }
}

/// Where a record's JSON text lies in its file: bytes `start..end` of file number `file` (in
/// the order the files were given to the loader). Reading those bytes back gives the record
/// again, texts included ([`crate::Dataset::fill_texts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub file: u32,
    pub start: u64,
    pub end: u64,
}

/// A record (of any kind, or of one kind `R`) and where it came from.
#[derive(Debug, Clone)]
pub struct Located<R = Record> {
    pub file: usize,
    pub location: Location,
    pub record: R,
    /// The record's JSON text, unknown fields included; kept only when asked for.
    pub raw: Option<Box<RawValue>>,
    pub span: Span,
}

/// Parsed records by kind, each kind in input order (input order across kinds is the order of
/// (`file`, `span.start`)). Kept apart from the start, so that assembling a dataset never moves
/// records of one kind past those of another.
#[derive(Debug, Default)]
pub struct Records {
    pub questions: Vec<Located<Question>>,
    pub answers: Vec<Located<Answer>>,
    pub judgments: Vec<Located<Judgment>>,
    pub scalar_judgments: Vec<Located<ScalarJudgment>>,
    pub failure_labels: Vec<Located<FailureLabel>>,
    pub reported: Vec<Located<ReportedValue>>,
    pub reviews: Vec<Located<Review>>,
}

/// Calls `$m!(field)` for each kind's vector of [`Records`].
macro_rules! each_kind {
    ($m:ident) => {
        $m!(questions);
        $m!(answers);
        $m!(judgments);
        $m!(scalar_judgments);
        $m!(failure_labels);
        $m!(reported);
        $m!(reviews);
    };
}

impl Records {
    /// Keeps a record. `room`: how many records at most may still come into these vectors
    /// (this one included); a kind's vector takes that room at its first record, so that it
    /// never grows by doubling (copies into fresh memory).
    pub(super) fn push(&mut self, r: Located, room: usize) {
        let Located {
            file,
            location,
            record,
            raw,
            span,
        } = r;
        macro_rules! put {
            ($field:ident, $v:expr) => {{
                if self.$field.capacity() == 0 {
                    self.$field.reserve_exact(room);
                }
                self.$field.push(Located {
                    file,
                    location,
                    record: $v,
                    raw,
                    span,
                })
            }};
        }
        match record {
            Record::Question(v) => put!(questions, v),
            Record::Answer(v) => put!(answers, v),
            Record::Judgment(v) => put!(judgments, v),
            Record::ScalarJudgment(v) => put!(scalar_judgments, v),
            Record::FailureLabel(v) => put!(failure_labels, v),
            Record::Reported(v) => put!(reported, v),
            Record::Review(v) => put!(reviews, v),
        }
    }

    /// How many records of each kind.
    pub(crate) fn lens(&self) -> [usize; KINDS] {
        let mut out = [0; KINDS];
        let mut i = 0;
        macro_rules! len {
            ($field:ident) => {
                out[i] = self.$field.len();
                i += 1;
            };
        }
        each_kind!(len);
        let _ = i;
        out
    }

    pub(super) fn clear(&mut self) {
        *self = Records::default();
    }

    /// Records per file number, added to `counts`.
    pub(super) fn count_files(&self, counts: &mut [usize]) {
        macro_rules! count {
            ($field:ident) => {
                for r in &self.$field {
                    if let Some(c) = counts.get_mut(r.file) {
                        *c += 1;
                    }
                }
            };
        }
        each_kind!(count);
    }

    pub fn len(&self) -> usize {
        self.lens().iter().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every record as a [`Record`], in input order.
    pub fn all(&self) -> Vec<Located> {
        let mut out: Vec<Located> = Vec::with_capacity(self.len());
        macro_rules! all {
            ($field:ident, $variant:ident) => {
                out.extend(self.$field.iter().map(|r| Located {
                    file: r.file,
                    location: r.location,
                    record: Record::$variant(r.record.clone()),
                    raw: r.raw.clone(),
                    span: r.span,
                }));
            };
        }
        all!(questions, Question);
        all!(answers, Answer);
        all!(judgments, Judgment);
        all!(scalar_judgments, ScalarJudgment);
        all!(failure_labels, FailureLabel);
        all!(reported, Reported);
        all!(reviews, Review);
        out.shared_sort_by_key(|r| (r.file, r.span.start));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON value's kind is the kind the loader gives the same record, for every kind and for
    /// records it cannot tell.
    #[test]
    fn a_values_kind_is_the_loaders() {
        let bench = include_str!("../../../../testdata/golden/benchmark.jsonl");
        let lines = [
            bench.lines().next().unwrap(),
            r#"{"question_id": "q1", "model": "m", "answer": "a"}"#,
            r#"{"question_id": "q1", "model": "m", "answer": null, "error": "timeout"}"#,
            r#"{"question_id": "q1", "model": "m", "error": null}"#,
            r#"{"question_id": "q1", "model": "m", "judge": "J", "items": []}"#,
            r#"{"question_id": "q1", "model": "m", "judge": "J", "dimensions": {"a": 3}, "max_per_dimension": 5}"#,
            r#"{"question_id": "q1", "model": "m", "classifier": "C", "mode": "hallucination"}"#,
            include_str!("../../../../testdata/reviews/ann.jsonl")
                .lines()
                .next()
                .unwrap(),
            r#"{"question_id": "q1", "model": "m", "answer": "a", "items": null}"#,
            r#"{"name": "x", "version": "1.0"}"#,
        ];
        for line in lines {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let files = [SourceFile {
                name: "x.jsonl",
                bytes: line.as_bytes(),
            }];
            let l = crate::load(&files, crate::LoadOptions::default());
            let loaded = RecordKind::ALL
                .into_iter()
                .find(|k| l.dataset.count(*k) == 1);
            assert_eq!(RecordKind::of_value(&v), loaded, "{line}: {:?}", l.issues);
        }
    }
}
