//! The serde side of loading: one parse of a record into [`AnyRecord`] (every field of every
//! kind, all optional), long texts kept or skipped by the [`Texts`] type parameter, and the
//! visitors that read a container read whole element by element (so that a syntax error keeps
//! what came before it).

use super::path_at::{Blame, offset, path_at};
use super::record::{Marks, Record, RecordKind};
use crate::issue::IssueKind;
use crate::model::*;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

/// How long free texts (answers, rationales) are read: kept, or checked as JSON strings and
/// left empty (scoring never reads them, and a first load that skips them is faster). A type
/// parameter of the parse, because serde's derive has no way to pass options to a field's
/// deserializer.
pub(super) trait Texts: 'static {
    /// A long free text.
    fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error>;

    /// [`Texts::text`] for a field that may be `null`, telling `null` from missing like
    /// [`present`].
    fn present_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error>;

    fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Self::text(d).map(Some)
    }
}

/// Texts kept.
#[derive(Default)]
pub(super) struct KeepTexts;

/// Texts checked as JSON strings, not copied: left empty.
#[derive(Default)]
pub(super) struct SkipTexts;

impl Texts for KeepTexts {
    fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        String::deserialize(d)
    }
    fn present_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
        Option::<String>::deserialize(d).map(Some)
    }
}

impl Texts for SkipTexts {
    fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        IgnoredAny::deserialize(d)?;
        Ok(String::new())
    }
    fn present_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
        let v = Option::<IgnoredAny>::deserialize(d)?;
        Ok(Some(v.map(|_| String::new())))
    }
}

/// Why a record's text is no `T`: where inside it (a serde path, empty for the whole), what
/// kind of problem, and serde_json's words for it.
pub(super) struct Bad {
    pub(super) path: String,
    pub(super) kind: IssueKind,
    pub(super) message: String,
}

/// Parses `T` fast; on failure says where the error is and of what kind: where the JSON
/// breaks, for a syntax error anywhere in the record (read again as a `serde_json::Value`),
/// else where serde_json stopped reading `T` (`path_at`, from the error's position) and the
/// kind its message names. No reading of `T` but the first: each reading of `T` through
/// another deserializer would be another copy of every record type's derived code in the site's
/// worker (issue 56: there were three).
pub(super) fn parse_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Bad> {
    let e = match serde_json::from_str::<T>(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let syntax = |path: String, e: &serde_json::Error| Bad {
        path,
        kind: json_error_kind(e, text.as_bytes()),
        message: format!(
            "invalid JSON: {}{}",
            strip_position(e),
            not_a_json_number(text.as_bytes(), e)
        ),
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(j) if j.is_syntax() || j.is_eof() => {
            let path = path_at(text, j.line(), j.column(), Blame::Syntax);
            return Err(syntax(path, &j));
        }
        Err(_) => return Err(syntax(String::new(), &e)),
        Ok(_) => {}
    }
    if e.is_syntax() || e.is_eof() {
        // A whole value, and something after it.
        return Err(syntax(String::new(), &e));
    }
    let message = strip_position(&e);
    let (kind, blame) = data_error_kind(&message);
    Err(Bad {
        path: path_at(text, e.line(), e.column(), blame),
        kind,
        message,
    })
}

/// The kind of a value that does not fit its type, by serde's words for it, and what its
/// position names (`path_at`): a missing field or too few elements (the object or array just
/// closed), a wrong type, a field given twice (the object), an unknown variant, else a value not
/// allowed (an unknown field, a number out of range, a value a type refuses). serde_json keeps
/// only the words (its `classify()` says `Data` for all), and the one other way, reading the
/// record again with an error type that keeps which `de::Error` method was called, costs a copy
/// of every record type's `Deserialize` in the site's worker; `path_at`'s test holds these words
/// to that reading (allowed in the tidy's `OTHERS_WORDS`).
fn data_error_kind(message: &str) -> (IssueKind, Blame) {
    if message.starts_with("missing field `") {
        (IssueKind::MissingField, Blame::Container)
    } else if message.starts_with("invalid type: ") {
        (IssueKind::WrongType, Blame::Value)
    } else if message.starts_with("duplicate field `") {
        (IssueKind::DuplicateKey, Blame::Duplicate)
    } else if message.starts_with("invalid length ") {
        (IssueKind::ValueNotAllowed, Blame::Container)
    } else if message.starts_with("unknown variant `") {
        (IssueKind::ValueNotAllowed, Blame::Variant)
    } else {
        (IssueKind::ValueNotAllowed, Blame::Value)
    }
}

/// The kind of a JSON parser's error on `bytes`: by its category, and for a syntax error by
/// what is there (`NaN`, or nesting deeper than the parser's limit).
pub(super) fn json_error_kind(e: &serde_json::Error, bytes: &[u8]) -> IssueKind {
    use serde_json::error::Category;
    match e.classify() {
        Category::Io => IssueKind::UnreadableFile,
        Category::Eof => IssueKind::CutShort,
        Category::Data => IssueKind::ValueNotAllowed,
        Category::Syntax if !not_a_json_number(bytes, e).is_empty() => IssueKind::NotAJsonNumber,
        Category::Syntax if depth_at(bytes, e.line(), e.column()) >= RECURSION_LIMIT => {
            IssueKind::NestedTooDeep
        }
        Category::Syntax => IssueKind::BrokenJson,
    }
}

/// serde_json's nesting limit: a value nested deeper is a syntax error.
const RECURSION_LIMIT: usize = 128;

/// How many arrays and objects are open at line `line`, column `column` of `bytes` (both
/// 1-based, as serde_json counts them), strings skipped.
fn depth_at(bytes: &[u8], line: usize, column: usize) -> usize {
    let end = offset(bytes, line, column).min(bytes.len());
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in &bytes[..end] {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => depth += 1,
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Why a syntax error is one when the value there is `NaN` or `Infinity` (Python's `json`
/// writes them; JSON has no such numbers), else nothing: said after the parser's message.
pub(super) fn not_a_json_number(bytes: &[u8], e: &serde_json::Error) -> &'static str {
    let line = bytes
        .split(|&b| b == b'\n')
        .nth(e.line().saturating_sub(1))
        .unwrap_or_default();
    let at = line.get(e.column().saturating_sub(1)..).unwrap_or_default();
    let at = at.strip_prefix(b"-").unwrap_or(at);
    if at.starts_with(b"NaN") || at.starts_with(b"Infinity") {
        " (NaN and Infinity are not numbers in JSON)"
    } else {
        ""
    }
}

/// serde_json's message without the " at line L column C" it appends (locations are given
/// separately).
pub(super) fn strip_position(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if e.line() == 0 {
        return msg;
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match msg.strip_suffix(&suffix) {
        Some(m) => m.to_string(),
        None => msg,
    }
}

/// Collects the elements of a JSON array as raw text into `out`, so that the elements read
/// before a syntax error survive it.
pub(super) struct CollectSeq<'a, 'de> {
    pub(super) out: &'a mut Vec<&'de RawValue>,
}

impl<'de> DeserializeSeed<'de> for CollectSeq<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CollectSeq<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of records")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<&'de RawValue>()? {
            self.out.push(v);
        }
        Ok(())
    }
}

/// The top level of a JSON object file: either a container (bundle or reported tables) or a
/// single record. Arrays are collected element by element, so a syntax error keeps the
/// elements before it.
#[derive(Default)]
pub(super) struct TopLevel<'de> {
    pub(super) format: Option<String>,
    pub(super) version: Option<serde_json::Value>,
    pub(super) meta: Option<serde_json::Value>,
    pub(super) arrays: Vec<(&'static str, Vec<&'de RawValue>)>,
    pub(super) duplicate_keys: Vec<(String, usize)>,
}

pub(super) const CONTAINER_ARRAYS: [&str; 7] = [
    "benchmark",
    "answers",
    "judgments",
    "scalar_judgments",
    "failure_modes",
    "reported",
    "values",
];

pub(super) struct TopVisitor<'a, 'de, T> {
    pub(super) top: &'a mut TopLevel<'de>,
    pub(super) texts: PhantomData<fn() -> T>,
}

impl<'de, T: Texts> DeserializeSeed<'de> for TopVisitor<'_, 'de, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Texts> Visitor<'de> for TopVisitor<'_, 'de, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let n = seen.entry(key.to_string()).or_insert(0);
            *n += 1;
            if *n > 1 {
                self.top.duplicate_keys.push((key.to_string(), *n));
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            if let Some(name) = CONTAINER_ARRAYS.iter().find(|k| **k == key) {
                let mut items = Vec::new();
                let r = map.next_value_seed(CollectSeq { out: &mut items });
                self.top.arrays.push((name, items));
                r?;
                continue;
            }
            match key.as_ref() {
                "format" => self.top.format = map.next_value::<Option<String>>()?,
                "version" => self.top.version = Some(map.next_value()?),
                "meta" => self.top.meta = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Every field of every record kind, all optional: one parse of a record tells both what it is
/// and its values. Unknown fields are ignored.
#[derive(Deserialize)]
#[serde(bound = "T: Texts")]
pub(super) struct AnyRecord<T> {
    pub(super) format: Option<IgnoredAny>,
    // question
    pub(super) id: Option<String>,
    pub(super) repo: Option<Repo>,
    pub(super) category: Option<String>,
    pub(super) question: Option<String>,
    pub(super) reference_answer: Option<String>,
    pub(super) external_context: Option<bool>,
    pub(super) checklist: Option<Vec<ChecklistItem>>,
    pub(super) curation: Option<serde_json::Value>,
    // shared by answers, judgments, labels
    pub(super) question_id: Option<String>,
    pub(super) model: Option<String>,
    pub(super) attempt: Option<u32>,
    // answer
    #[serde(default, deserialize_with = "T::present_text")]
    pub(super) answer: Option<Option<String>>,
    #[serde(default, deserialize_with = "crate::model::agent::block")]
    pub(super) agent: Option<Box<crate::model::agent::AgentBlock>>,
    pub(super) usage: Option<Usage>,
    pub(super) duration_s: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    pub(super) error: Option<Option<String>>,
    // judgments
    pub(super) judge: Option<String>,
    pub(super) judge_run: Option<u32>,
    pub(super) items: Option<Vec<LenientItem<T>>>,
    pub(super) dimensions: Option<BTreeMap<String, u32>>,
    pub(super) max_per_dimension: Option<u32>,
    #[serde(default, deserialize_with = "T::opt_text")]
    pub(super) rationale: Option<String>,
    // failure-mode label
    pub(super) classifier: Option<String>,
    pub(super) mode: Option<FailureMode>,
    // review: only told apart here; read as its own type (`load::Cx::accept_any`), so that a
    // field of another record that shares a review's names never costs that record.
    pub(super) reviewer: Option<IgnoredAny>,
    #[serde(skip)]
    pub(super) texts: PhantomData<fn() -> T>,
}

/// An [`ItemScore`] whose rationale is read as `T` says (named like it in messages).
#[derive(Deserialize)]
#[serde(
    rename = "ItemScore",
    expecting = "struct ItemScore",
    bound = "T: Texts"
)]
pub(super) struct LenientItem<T> {
    id: String,
    #[serde(default, deserialize_with = "T::text")]
    rationale: String,
    score: u32,
    #[serde(skip)]
    texts: PhantomData<fn() -> T>,
}

/// Tells a field given as `null` (Some(None)) from a missing one (None).
pub(super) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The required field `$field` of `$fields`, or `None` with its name put in `$missing` (every
/// missing field is named, not only the first).
macro_rules! required {
    ($fields:expr, $missing:expr, $field:ident) => {
        match $fields.$field {
            Some(v) => Some(v),
            None => {
                $missing.push(concat!("`", stringify!($field), "`"));
                None
            }
        }
    };
}

impl<T: Texts> AnyRecord<T> {
    pub(super) fn detect(&self) -> Option<RecordKind> {
        Marks {
            checklist: self.checklist.is_some(),
            question: self.question.is_some(),
            reference_answer: self.reference_answer.is_some(),
            items: self.items.is_some(),
            dimensions: self.dimensions.is_some(),
            mode: self.mode.is_some(),
            classifier: self.classifier.is_some(),
            answer: self.answer.is_some(),
            question_id: self.question_id.is_some(),
            error: self.error.is_some(),
            reviewer: self.reviewer.is_some(),
        }
        .kind()
    }

    /// The record of `kind` these fields make, or the names of the required fields missing.
    pub(super) fn into_record(self, kind: RecordKind) -> Result<Record, Vec<&'static str>> {
        let mut missing = Vec::new();
        let record = match kind {
            RecordKind::Question => self.into_question(&mut missing),
            RecordKind::Answer => self.into_answer(&mut missing),
            RecordKind::Judgment => self.into_judgment(&mut missing),
            RecordKind::ScalarJudgment => self.into_scalar_judgment(&mut missing),
            RecordKind::FailureLabel => self.into_failure_label(&mut missing),
            // Reported values and reviews have their own types and never come through here.
            RecordKind::Reported => return Err(vec!["`table`"]),
            RecordKind::Review => return Err(vec!["`reviewer`"]),
        };
        record.ok_or(missing)
    }

    fn into_question(self, missing: &mut Vec<&'static str>) -> Option<Record> {
        let (id, repo, category, question, reference_answer, checklist) = (
            required!(self, missing, id),
            required!(self, missing, repo),
            required!(self, missing, category),
            required!(self, missing, question),
            required!(self, missing, reference_answer),
            required!(self, missing, checklist),
        );
        match (id, repo, category, question, reference_answer, checklist) {
            (
                Some(id),
                Some(repo),
                Some(category),
                Some(question),
                Some(reference_answer),
                Some(checklist),
            ) => Some(Record::Question(Question {
                id,
                repo,
                category,
                question,
                reference_answer,
                external_context: self.external_context.unwrap_or(false),
                checklist,
                curation: self.curation,
            })),
            _ => None,
        }
    }

    fn into_answer(self, missing: &mut Vec<&'static str>) -> Option<Record> {
        let (question_id, model) = (
            required!(self, missing, question_id),
            required!(self, missing, model),
        );
        match (question_id, model) {
            (Some(question_id), Some(model)) => Some(Record::Answer(Answer {
                question_id,
                model,
                attempt: self.attempt.unwrap_or(0),
                answer: self.answer.flatten(),
                agent: self.agent,
                usage: self.usage,
                duration_s: self.duration_s,
                error: self.error.flatten(),
            })),
            _ => None,
        }
    }

    fn into_judgment(self, missing: &mut Vec<&'static str>) -> Option<Record> {
        let (question_id, model, judge, items) = (
            required!(self, missing, question_id),
            required!(self, missing, model),
            required!(self, missing, judge),
            required!(self, missing, items),
        );
        match (question_id, model, judge, items) {
            (Some(question_id), Some(model), Some(judge), Some(items)) => {
                Some(Record::Judgment(Judgment {
                    question_id,
                    model,
                    attempt: self.attempt.unwrap_or(0),
                    judge,
                    judge_run: self.judge_run.unwrap_or(0),
                    items: {
                        let mut items: Vec<ItemScore> = items
                            .into_iter()
                            .map(|i| ItemScore {
                                id: i.id,
                                rationale: i.rationale,
                                score: i.score,
                            })
                            .collect();
                        // The parse's vector grew by doubling: 4 places for 2 items is
                        // 5 MB of nothing over 50,000 judgments.
                        items.shrink_to_fit();
                        items
                    },
                }))
            }
            _ => None,
        }
    }

    fn into_scalar_judgment(self, missing: &mut Vec<&'static str>) -> Option<Record> {
        let (question_id, model, judge, dimensions, max_per_dimension) = (
            required!(self, missing, question_id),
            required!(self, missing, model),
            required!(self, missing, judge),
            required!(self, missing, dimensions),
            required!(self, missing, max_per_dimension),
        );
        match (question_id, model, judge, dimensions, max_per_dimension) {
            (
                Some(question_id),
                Some(model),
                Some(judge),
                Some(dimensions),
                Some(max_per_dimension),
            ) => Some(Record::ScalarJudgment(ScalarJudgment {
                question_id,
                model,
                attempt: self.attempt.unwrap_or(0),
                judge,
                judge_run: self.judge_run.unwrap_or(0),
                dimensions,
                max_per_dimension,
                rationale: self.rationale.unwrap_or_default(),
            })),
            _ => None,
        }
    }

    fn into_failure_label(self, missing: &mut Vec<&'static str>) -> Option<Record> {
        let (question_id, model, classifier, mode) = (
            required!(self, missing, question_id),
            required!(self, missing, model),
            required!(self, missing, classifier),
            required!(self, missing, mode),
        );
        match (question_id, model, classifier, mode) {
            (Some(question_id), Some(model), Some(classifier), Some(mode)) => {
                Some(Record::FailureLabel(FailureLabel {
                    question_id,
                    model,
                    attempt: self.attempt.unwrap_or(0),
                    classifier,
                    mode,
                    rationale: self.rationale.unwrap_or_default(),
                }))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct R {
        id: String,
        n: Vec<u32>,
    }

    fn bad(text: &str) -> (String, IssueKind, String) {
        let b = parse_typed::<R>(text).expect_err(text);
        (b.path, b.kind, b.message)
    }

    /// Where a record fails and why, each way it can: the path from the second reading, the
    /// words serde_json's.
    #[test]
    fn a_failed_record_says_where_and_why() {
        assert!(parse_typed::<R>(r#"{"id": "a", "n": [1, 2]}"#).is_ok());
        let (path, kind, message) = bad(r#"{"id": "a", "n": [1, "two"]}"#);
        assert_eq!((path.as_str(), kind), ("n[1]", IssueKind::WrongType));
        assert_eq!(message, r#"invalid type: string "two", expected u32"#);
        let (path, kind, message) = bad(r#"{"id": "a", "n": [1, }"#);
        assert_eq!((path.as_str(), kind), ("n[1]", IssueKind::BrokenJson));
        assert!(
            message.starts_with("invalid JSON: expected value"),
            "{message}"
        );
        let (path, _, message) = bad(r#"{"id": "a", "n": []} x"#);
        assert_eq!(path, "");
        assert_eq!(message, "invalid JSON: trailing characters");
        let (path, kind, _) = bad(r#"{"n": []}"#);
        assert_eq!((path.as_str(), kind), (".", IssueKind::MissingField));
        // Broken both ways: a value that does not fit before the JSON breaks is invalid JSON.
        let (path, kind, message) = bad(r#"{"id": 7, "n": [1, }"#);
        assert_eq!((path.as_str(), kind), ("n[1]", IssueKind::BrokenJson));
        assert!(message.starts_with("invalid JSON: "), "{message}");
    }
}
