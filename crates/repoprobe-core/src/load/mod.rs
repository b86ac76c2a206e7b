//! From bytes to typed records: detects the file's shape by content (JSON array, single object,
//! results bundle, JSONL; a UTF-8 BOM is skipped), reads every record on its own so that one bad
//! record never costs the others, and reports each problem with its location.
//!
//! This module only parses records one by one. Rules that need other records (unknown question,
//! duplicates, items against the checklist) are applied by [`crate::dataset`].

mod record;
mod visitors;

pub use record::{Located, Location, Record, RecordKind, SourceFile};

use crate::issue::{Issue, Severity, quote};
use crate::model::*;
use serde::de::{DeserializeSeed, IgnoredAny};
use serde_json::value::RawValue;
use std::marker::PhantomData;
use visitors::{
    AnyRecord, CollectSeq, FastSeq, KeepTexts, SkipTexts, Texts, TopLevel, TopVisitor, parse_typed,
    strip_position,
};

/// The `format` of a file of published table values (SPEC §2.7).
pub const REPORTED_FORMAT: &str = "repoprobe-reported";

/// What one file held.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileSummary {
    pub name: String,
    /// `json`, `jsonl`, `bundle`, `reported` or `unknown`.
    pub shape: String,
    pub bytes: usize,
    pub records: usize,
    /// The `meta` object of a bundle or reported file, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
}

/// The records of all files, in input order, with every issue found on the way.
#[derive(Debug, Default)]
pub struct Parsed {
    pub records: Vec<Located>,
    pub issues: Vec<Issue>,
    pub files: Vec<FileSummary>,
}

/// Reads every file. `keep_raw` keeps each record's JSON text (for writing bundles that keep
/// unknown fields); `skip_text` leaves long free texts empty (scoring does not read them).
pub fn parse_files(files: &[SourceFile<'_>], options: crate::LoadOptions) -> Parsed {
    if options.skip_text && !options.keep_raw {
        parse_all::<SkipTexts>(files, options.keep_raw)
    } else {
        parse_all::<KeepTexts>(files, options.keep_raw)
    }
}

/// [`parse_files`] with long free texts read as `T` says.
fn parse_all<T: Texts>(files: &[SourceFile<'_>], keep_raw: bool) -> Parsed {
    let mut out = Parsed::default();
    for (index, file) in files.iter().enumerate() {
        let mut cx = FileCx::<T> {
            index,
            name: file.name,
            keep_raw,
            out: &mut out,
            records: 0,
            meta: None,
            texts: PhantomData,
        };
        let shape = cx.parse(file.bytes);
        let records = cx.records;
        let meta = cx.meta.take();
        out.files.push(FileSummary {
            name: file.name.to_string(),
            shape: shape.to_string(),
            bytes: file.bytes.len(),
            records,
            meta,
        });
    }
    out
}

struct FileCx<'o, T> {
    index: usize,
    name: &'o str,
    keep_raw: bool,
    out: &'o mut Parsed,
    records: usize,
    meta: Option<serde_json::Value>,
    texts: PhantomData<fn() -> T>,
}

impl<T: Texts> FileCx<'_, T> {
    fn issue(
        &mut self,
        location: impl std::fmt::Display,
        message: impl Into<String>,
        severity: Severity,
    ) {
        self.out.issues.push(Issue {
            file: self.name.to_string(),
            location: location.to_string(),
            message: message.into(),
            severity,
        });
    }

    fn parse(&mut self, bytes: &[u8]) -> &'static str {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let Some(first) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
            self.issue(
                "file",
                "the file is empty: expected JSON or JSONL records",
                Severity::File,
            );
            return "unknown";
        };
        match bytes[first] {
            b'[' => {
                if let Some(text) = self.utf8(bytes) {
                    self.parse_json_array(text);
                }
                "json"
            }
            b'{' if looks_like_jsonl(&bytes[first..]) => {
                self.parse_jsonl(bytes);
                "jsonl"
            }
            b'{' => match self.utf8(bytes) {
                Some(text) => self.parse_json_object(text),
                None => "unknown",
            },
            other => {
                let (line, column) = line_col(bytes, first);
                self.issue(
                    format!("line {line}, column {column}"),
                    format!(
                        "not JSON: a RepoProbe file starts with `[`, `{{` or a JSON object per line, found {}",
                        describe_byte(other)
                    ),
                    Severity::File,
                );
                "unknown"
            }
        }
    }

    fn utf8<'b>(&mut self, bytes: &'b [u8]) -> Option<&'b str> {
        match std::str::from_utf8(bytes) {
            Ok(t) => Some(t),
            Err(e) => {
                let (line, column) = line_col(bytes, e.valid_up_to());
                self.issue(
                    format!("line {line}, column {column}"),
                    "not UTF-8 text: JSON files must be UTF-8 encoded",
                    Severity::File,
                );
                None
            }
        }
    }

    /// Where the output stands, to undo a fast pass that met an error.
    fn mark(&self) -> (usize, usize, usize) {
        (self.out.records.len(), self.out.issues.len(), self.records)
    }

    fn rollback(&mut self, (records, issues, count): (usize, usize, usize)) {
        self.out.records.truncate(records);
        self.out.issues.truncate(issues);
        self.records = count;
    }

    fn parse_jsonl(&mut self, bytes: &[u8]) {
        let mut line_no = 0usize;
        for line in bytes.split(|&b| b == b'\n') {
            line_no += 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let location = Location::Line(line_no);
            let Ok(text) = std::str::from_utf8(line) else {
                self.issue(
                    location,
                    "not UTF-8 text: the line is left out",
                    Severity::Record,
                );
                continue;
            };
            self.parse_record_text(text, location, None, true);
        }
    }

    fn parse_json_array(&mut self, text: &str) {
        if !self.keep_raw {
            // One pass straight into records; any error anywhere undoes it and falls back to the
            // record-by-record path below, which locates the error and keeps everything else.
            let mark = self.mark();
            let mut de = serde_json::Deserializer::from_str(text);
            let ok = {
                let mut sink = |any, loc, kind| self.accept_any(any, loc, kind, None);
                FastSeq {
                    key: None,
                    kind: None,
                    sink: &mut sink,
                }
                .deserialize(&mut de)
                .and_then(|()| de.end())
                .is_ok()
            };
            if ok {
                return;
            }
            self.rollback(mark);
        }
        let mut items: Vec<&RawValue> = Vec::new();
        let mut de = serde_json::Deserializer::from_str(text);
        let result = CollectSeq { out: &mut items }
            .deserialize(&mut de)
            .and_then(|()| de.end());
        let count = items.len();
        for (i, raw) in items.into_iter().enumerate() {
            self.parse_record_text(raw.get(), Location::Index(None, i), None, false);
        }
        if let Err(e) = result {
            self.syntax_issue(&e, count);
        }
    }

    fn parse_json_object(&mut self, text: &str) -> &'static str {
        if !self.keep_raw {
            let mark = self.mark();
            let mut top = TopLevel::default();
            let mut de = serde_json::Deserializer::from_str(text);
            let ok = {
                let mut sink = |any, loc, kind| self.accept_any(any, loc, kind, None);
                TopVisitor {
                    top: &mut top,
                    sink: Some(&mut sink),
                }
                .deserialize(&mut de)
                .and_then(|()| de.end())
                .is_ok()
            };
            let version_ok = top
                .version
                .as_ref()
                .is_none_or(|v| v.as_u64() == Some(u64::from(crate::FORMAT_VERSION)));
            if ok
                && top.format.as_deref() == Some(BUNDLE_FORMAT)
                && top.duplicate_keys.is_empty()
                && version_ok
            {
                self.container_records(&mut top, false);
                return "bundle";
            }
            self.rollback(mark);
        }
        let mut top = TopLevel::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let result = TopVisitor::<T> {
            top: &mut top,
            sink: None,
        }
        .deserialize(&mut de)
        .and_then(|()| de.end());
        let recovered = top.arrays.iter().map(|(_, v)| v.len()).sum::<usize>();
        let shape = match top.format.as_deref() {
            Some(BUNDLE_FORMAT) => {
                self.container_records(&mut top, false);
                "bundle"
            }
            Some(REPORTED_FORMAT) => {
                self.container_records(&mut top, true);
                "reported"
            }
            Some(other) => {
                self.issue(
                    "$.format",
                    format!(
                        "unknown file format {}: expected \"{BUNDLE_FORMAT}\" or \"{REPORTED_FORMAT}\"",
                        quote(other)
                    ),
                    Severity::File,
                );
                "unknown"
            }
            None => {
                if result.is_ok() {
                    self.parse_record_text(text, Location::Root, None, false);
                }
                "json"
            }
        };
        if let Err(e) = result {
            self.syntax_issue(&e, recovered);
        }
        shape
    }

    /// Takes the records of a container; false when its version is not one this tool reads.
    fn container_records(&mut self, top: &mut TopLevel<'_>, reported: bool) -> bool {
        if let Some(v) = top.version.as_ref()
            && v.as_u64() != Some(u64::from(crate::FORMAT_VERSION))
        {
            self.issue(
                "$.version",
                format!(
                    "unsupported version {v}: this tool reads version {}",
                    crate::FORMAT_VERSION
                ),
                Severity::File,
            );
            return false;
        }
        for (key, dup) in std::mem::take(&mut top.duplicate_keys) {
            self.issue(
                format!("$.{key}"),
                format!("duplicate key `{key}` (occurrence {dup}): the first is kept"),
                Severity::Record,
            );
        }
        self.meta = top.meta.take();
        let arrays = std::mem::take(&mut top.arrays);
        for (key, items) in arrays {
            let expected = if reported {
                if key != "values" {
                    continue;
                }
                RecordKind::Reported
            } else {
                match RecordKind::from_bundle_key(key) {
                    Some(k) => k,
                    None => continue,
                }
            };
            for (i, raw) in items.into_iter().enumerate() {
                self.parse_record_text(
                    raw.get(),
                    Location::Index(Some(key), i),
                    Some(expected),
                    false,
                );
            }
        }
        true
    }

    fn syntax_issue(&mut self, e: &serde_json::Error, recovered: usize) {
        let kept = if recovered > 0 {
            format!("; the {recovered} record(s) before it were read, the rest of the file was not")
        } else {
            "; the rest of the file was not read".to_string()
        };
        self.issue(
            format!("line {}, column {}", e.line(), e.column()),
            format!("invalid JSON: {}{kept}", strip_position(&e.to_string())),
            Severity::File,
        );
    }

    /// Parses one record's text (a JSONL line, an array element, a bundle entry).
    fn parse_record_text(
        &mut self,
        text: &str,
        location: Location,
        expected: Option<RecordKind>,
        jsonl: bool,
    ) {
        let at = |path: &str| -> String {
            if path.is_empty() || path == "." {
                location.to_string()
            } else if jsonl {
                format!("{location}, {path}")
            } else if path.starts_with('[') {
                format!("{location}{path}")
            } else {
                format!("{location}.{path}")
            }
        };
        if let Some(&b) = text.as_bytes().iter().find(|b| !b.is_ascii_whitespace())
            && b != b'{'
        {
            self.issue(
                location,
                format!(
                    "a record must be a JSON object {{...}}; found {}",
                    describe_byte(b)
                ),
                Severity::Record,
            );
            return;
        }
        if expected == Some(RecordKind::Reported) {
            match parse_typed::<ReportedValue>(text) {
                Ok(v) => self.push(location, Record::Reported(v), text),
                Err((path, msg)) => self.issue(
                    at(&path),
                    format!("invalid reported value: {msg}"),
                    Severity::Record,
                ),
            }
            return;
        }
        let any = match parse_typed::<AnyRecord<T>>(text) {
            Ok(any) => any,
            Err((path, msg)) => {
                self.issue(at(&path), msg, Severity::Record);
                return;
            }
        };
        if jsonl && any.format.is_some() {
            // A bundle written on one line.
            self.parse_json_object(text);
            return;
        }
        self.accept_any(any, location, expected, Some(text));
    }

    /// Classifies a parsed record and keeps it, or reports what it lacks.
    fn accept_any(
        &mut self,
        any: AnyRecord<T>,
        location: Location,
        expected: Option<RecordKind>,
        text: Option<&str>,
    ) {
        let kind = match expected.or_else(|| any.detect()) {
            Some(k) => k,
            None => {
                self.issue(
                    location,
                    "cannot tell what this record is: it has none of `checklist` (question), `answer`, \
                     `items` (judgment), `dimensions` (scalar judgment) or `mode` (failure-mode label)",
                    Severity::Record,
                );
                return;
            }
        };
        match any.into_record(kind) {
            Ok(record) => self.push(location, record, text.unwrap_or_default()),
            Err(missing) => self.issue(
                location,
                format!(
                    "invalid {}: missing field(s) {}",
                    kind.noun(),
                    missing.join(", ")
                ),
                Severity::Record,
            ),
        }
    }

    fn push(&mut self, location: Location, record: Record, text: &str) {
        self.records += 1;
        let raw = if self.keep_raw {
            RawValue::from_string(text.to_string()).ok()
        } else {
            None
        };
        self.out.records.push(Located {
            file: self.index,
            location,
            record,
            raw,
        });
    }
}

/// JSONL when the first line is a complete JSON object and more content follows it. A file
/// that is one object (on one line or pretty-printed over many) is read as one JSON value.
fn looks_like_jsonl(bytes: &[u8]) -> bool {
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let rest_has_content = bytes[end..].iter().any(|b| !b.is_ascii_whitespace());
    let line = bytes[..end].trim_ascii();
    rest_has_content
        && line.len() >= 2
        && line.starts_with(b"{")
        && line.ends_with(b"}")
        && serde_json::from_slice::<IgnoredAny>(line).is_ok()
}

fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> Parsed {
        parse_files(
            &[SourceFile {
                name,
                bytes: text.as_bytes(),
            }],
            Default::default(),
        )
    }

    const Q: &str = r#"{"id":"q1","repo":{"name":"o/r"},"category":"Business Logic","question":"?","reference_answer":"!","checklist":[]}"#;
    const J: &str = r#"{"question_id":"q1","model":"m","judge":"j","items":[{"id":"k1","rationale":"r","score":1}]}"#;

    #[test]
    fn bom_is_skipped_and_crlf_lines_are_read() {
        let text = format!("\u{feff}{Q}\r\n{J}\r\n");
        let p = parse("a.jsonl", &text);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.records[1].record.kind(), RecordKind::Judgment);
        assert_eq!(p.files[0].shape, "jsonl");
    }

    #[test]
    fn json_array_syntax_error_keeps_the_records_before_it() {
        let text = format!("[{Q},\n{J},\n{{\"oops\": ]");
        let p = parse("a.json", &text);
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].severity, Severity::File);
        assert!(
            p.issues[0].location.starts_with("line 3"),
            "{:?}",
            p.issues[0]
        );
        assert!(
            p.issues[0]
                .message
                .contains("2 record(s) before it were read"),
            "{}",
            p.issues[0].message
        );
    }

    #[test]
    fn a_type_error_is_located_by_json_path() {
        let bad = J.replace("\"score\":1", "\"score\":\"two\"");
        let p = parse("a.json", &format!("[{Q}, {bad}]"));
        assert_eq!(p.records.len(), 1);
        assert_eq!(
            p.issues[0].location, "$[1].items[0].score",
            "{:?}",
            p.issues
        );
        assert!(
            p.issues[0].message.contains("invalid type"),
            "{}",
            p.issues[0].message
        );
        let neg = J.replace("\"score\":1", "\"score\":-1");
        let p = parse("a.jsonl", &format!("{Q}\n{neg}\n"));
        assert_eq!(p.issues[0].location, "line 2, items[0].score");
    }

    #[test]
    fn bundle_arrays_decide_the_kind_and_missing_fields_are_named() {
        let text = format!(
            r#"{{"format":"repoprobe-results","version":1,"meta":{{"x":1}},"benchmark":[{Q}],"judgments":[{J},{{"question_id":"q1"}}]}}"#
        );
        let p = parse("b.json", &text);
        assert_eq!(p.files[0].shape, "bundle");
        assert_eq!(p.files[0].meta, Some(serde_json::json!({"x": 1})));
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].location, "$.judgments[1]");
        assert!(p.issues[0].message.contains("`model`") && p.issues[0].message.contains("`items`"));
    }

    #[test]
    fn unsupported_bundle_version_and_unknown_format_are_unusable() {
        let p = parse(
            "b.json",
            r#"{"format":"repoprobe-results","version":2,"judgments":[]}"#,
        );
        assert_eq!(p.issues[0].severity, Severity::File);
        assert!(p.issues[0].message.contains("unsupported version 2"));
        let p = parse("b.json", r#"{"format":"something-else"}"#);
        assert!(p.issues[0].message.contains("unknown file format"));
    }

    #[test]
    fn duplicate_bundle_keys_keep_the_first() {
        let text = format!(
            r#"{{"format":"repoprobe-results","version":1,"benchmark":[{Q}],"benchmark":[{Q},{Q}]}}"#
        );
        let p = parse("b.json", &text);
        assert_eq!(p.records.len(), 1);
        assert!(
            p.issues
                .iter()
                .any(|i| i.message.contains("duplicate key `benchmark`")),
            "{:?}",
            p.issues
        );
    }

    #[test]
    fn a_record_of_unknown_shape_is_reported() {
        let p = parse("a.jsonl", "{\"hello\": 1}\n{\"x\": 2}\n");
        assert_eq!(p.issues.len(), 2);
        assert!(
            p.issues[0]
                .message
                .contains("cannot tell what this record is")
        );
    }

    #[test]
    fn non_json_and_empty_and_non_utf8_files_are_unusable() {
        for (bytes, needle) in [
            (&b"hello"[..], "not JSON"),
            (&b"   \n"[..], "empty"),
            (&b"[\"\xff\"]"[..], "not UTF-8"),
        ] {
            let p = parse_files(&[SourceFile { name: "x", bytes }], Default::default());
            assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
            assert_eq!(p.issues[0].severity, Severity::File);
            assert!(
                p.issues[0].message.contains(needle),
                "{}",
                p.issues[0].message
            );
        }
    }

    #[test]
    fn nesting_deeper_than_128_is_an_error_not_a_stack_overflow() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for text in [
            deep(200_000),
            format!("[{}]", deep(100_000)),
            format!(
                "{{\"question_id\":\"q\",\"model\":\"m\",\"answer\":\"a\",\"agent\":{}}}\n{J}\n",
                deep(100_000)
            ),
            format!(
                "{{\"format\":\"repoprobe-results\",\"version\":1,\"meta\":{}}}",
                deep(100_000)
            ),
        ] {
            let p = parse("deep.json", &text);
            assert!(!p.issues.is_empty(), "nesting must be reported");
            assert!(
                p.issues
                    .iter()
                    .any(|i| i.message.contains("recursion limit")
                        || i.message.contains("must be a JSON object")),
                "{:?}",
                p.issues
            );
        }
        // 100 levels inside an unknown field are fine.
        let ok = format!(
            "[{}]",
            J.replace(
                "\"judge\":\"j\"",
                &format!("\"judge\":\"j\",\"extra\":{}", deep(100))
            )
        );
        assert!(parse("ok.json", &ok).issues.is_empty());
    }

    #[test]
    fn a_ten_megabyte_string_loads() {
        let big = "x".repeat(10 * 1024 * 1024);
        let text = J.replace("\"rationale\":\"r\"", &format!("\"rationale\":\"{big}\""));
        let p = parse("big.jsonl", &text);
        assert!(p.issues.is_empty());
        let Record::Judgment(j) = &p.records[0].record else {
            panic!("not a judgment")
        };
        assert_eq!(j.items[0].rationale.len(), big.len());
    }

    #[test]
    fn skip_text_leaves_rationales_empty_but_still_checks_them() {
        let text = format!("{Q}\n{J}\n");
        let o = crate::LoadOptions {
            skip_text: true,
            ..Default::default()
        };
        let p = parse_files(
            &[SourceFile {
                name: "a",
                bytes: text.as_bytes(),
            }],
            o,
        );
        let Record::Judgment(j) = &p.records[1].record else {
            panic!("not a judgment")
        };
        assert_eq!(j.items[0].rationale, "");
        let bad = J.replace("\"rationale\":\"r\"", "\"rationale\":7");
        let p = parse_files(
            &[SourceFile {
                name: "a",
                bytes: bad.as_bytes(),
            }],
            o,
        );
        assert_eq!(p.issues.len(), 0, "a skipped text accepts any JSON value");
        // And the flag does not leak into the next load.
        let p = parse("a.jsonl", &text);
        let Record::Judgment(j) = &p.records[1].record else {
            panic!("not a judgment")
        };
        assert_eq!(j.items[0].rationale, "r");
    }

    #[test]
    fn raw_text_is_kept_only_when_asked() {
        let text = J.replace(
            "\"judge\":\"j\"",
            "\"judge\":\"j\",\"prompt_version\":\"v3\"",
        );
        let p = parse_files(
            &[SourceFile {
                name: "a",
                bytes: text.as_bytes(),
            }],
            crate::LoadOptions {
                keep_raw: true,
                ..Default::default()
            },
        );
        assert!(
            p.records[0]
                .raw
                .as_ref()
                .unwrap()
                .get()
                .contains("prompt_version")
        );
        assert!(parse("a", &text).records[0].raw.is_none());
    }
}
