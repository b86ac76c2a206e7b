//! What the loader gives: the records (`Record`, `RecordKind`), where each was found
//! (`Location`, `Located`) and the input files (`SourceFile`).

use crate::model::*;
use serde_json::value::RawValue;
use std::fmt;

/// One input file: a name for messages and its bytes. The core never opens files itself.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// The record kinds of SPEC §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Question,
    Answer,
    Judgment,
    ScalarJudgment,
    FailureLabel,
    Reported,
}

impl RecordKind {
    pub const ALL: [RecordKind; 6] = [
        RecordKind::Question,
        RecordKind::Answer,
        RecordKind::Judgment,
        RecordKind::ScalarJudgment,
        RecordKind::FailureLabel,
        RecordKind::Reported,
    ];

    pub fn noun(self) -> &'static str {
        match self {
            RecordKind::Question => "question",
            RecordKind::Answer => "answer",
            RecordKind::Judgment => "judgment",
            RecordKind::ScalarJudgment => "scalar judgment",
            RecordKind::FailureLabel => "failure-mode label",
            RecordKind::Reported => "reported value",
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
        }
    }

    pub(super) fn from_bundle_key(key: &str) -> Option<RecordKind> {
        RecordKind::ALL.into_iter().find(|k| k.bundle_key() == key)
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

/// A record and where it came from.
#[derive(Debug, Clone)]
pub struct Located {
    pub file: usize,
    pub location: Location,
    pub record: Record,
    /// The record's JSON text, unknown fields included; kept only when asked for.
    pub raw: Option<Box<RawValue>>,
}
