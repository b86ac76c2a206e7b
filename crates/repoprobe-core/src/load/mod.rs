//! From bytes to typed records: detects a file's shape by content (JSON array, single object,
//! results bundle, JSONL; a UTF-8 BOM is skipped), reads every record on its own so that one bad
//! record never costs the others, and reports each problem with its location.
//!
//! Files arrive as streams: `stream` takes each file's bytes chunk by chunk, `split` cuts them
//! into records (never holding the whole file), and batches of records are parsed here
//! (`parse_batch`), on the calling thread or — with the `parallel` feature and
//! [`LoadOptions::threads`] — on several. Each record keeps its [`Span`], where its text lies in
//! its file, so that texts skipped by a load can be read back later.
//!
//! This module only parses records one by one and hands them on, in input order, to an
//! assembler it does not name. Rules that need other records (unknown question, duplicates,
//! items against the checklist) are the assembler's, in the layer above (`crate::dataset`, which
//! uses this module and is never used by it).

#[cfg(test)]
mod kinded;
mod path_at;
mod record;
mod split;
mod stream;
mod visitors;

pub use record::{KINDS, Located, Location, Record, RecordKind, Records, SourceFile, Span};
pub(crate) use stream::{Assemble, Finished, RecordStream};

use crate::issue::{Issue, IssueKind, Place, Problem, RecordAt, Severity};
use crate::model::*;
use crate::sort::SharedSort;
use crate::text::quote;
use serde::de::DeserializeSeed;
use serde_json::value::RawValue;
use split::{CutBatch, What};
use std::marker::PhantomData;
use visitors::{
    AnyRecord, KeepTexts, SkipTexts, Texts, TopLevel, TopVisitor, parse_typed, strip_position,
};

/// The `format` of a file of published table values (docs/format.md#reported-values).
pub const REPORTED_FORMAT: &str = "repoprobe-reported";

/// Options of a load: what its records keep, and how many threads parse them.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Keep each record's JSON text (for `bundle`, which must keep unknown fields).
    pub keep_raw: bool,
    /// Leave long free texts (rationales, answers) empty: for scoring only, where they are
    /// never read, it saves copying most of a results file. Ignored when `keep_raw` is set.
    /// The records' [`Span`]s are kept instead, to read the texts back.
    pub skip_text: bool,
    /// Threads that parse records while the caller's thread cuts them out of the files (with
    /// more than one, one more thread assembles the dataset as they come); 0 or 1 parses and
    /// assembles on the caller's thread. Only with the `parallel` feature (never in the site's
    /// wasm); the result is the same whatever the number.
    pub threads: usize,
}

/// What one file held.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileSummary {
    pub name: String,
    /// `json`, `jsonl`, `bundle`, `reported` or `unknown`.
    pub shape: String,
    pub bytes: usize,
    pub records: usize,
    /// The `meta` object of a bundle or reported file, as given.
    #[serde(
        default,
        skip_serializing_if = "crate::skip::none",
        with = "crate::json_text"
    )]
    pub meta: Option<serde_json::Value>,
}

/// The records of all files, by kind, in parts (one per file per batch, in input order), with
/// every issue found on the way. Parts are never merged: assembling takes their records kind by
/// kind and frees each part's vector as soon as it is read.
#[derive(Debug, Default)]
pub struct Parsed {
    pub records: Vec<Records>,
    pub issues: Vec<Issue>,
    pub files: Vec<FileSummary>,
}

impl Parsed {
    /// Every record as a [`Record`], in input order.
    pub fn all(&self) -> Vec<Located> {
        let mut out: Vec<Located> = self.records.iter().flat_map(Records::all).collect();
        out.shared_sort_by_key(|r| (r.file, r.span.start));
        out
    }

    pub fn len(&self) -> usize {
        self.records.iter().map(Records::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What parsing a batch found for one file (a batch may hold the end of one file and the start
/// of the next). The file names of the issues are filled in by the loader.
#[derive(Debug, Default)]
struct Segment {
    pub(super) file: usize,
    pub(super) records: Records,
    pub(super) issues: Vec<Issue>,
    /// A problem that ends the file was met: nothing after it in the file counts.
    pub(super) fatal: bool,
    /// The file's records before this point are void (a container of an unsupported version).
    pub(super) void: bool,
    /// The shape and `meta` of a file parsed whole.
    pub(super) whole: Option<(&'static str, Option<serde_json::Value>)>,
}

/// Parses the units of a batch; long free texts are skipped when `options` say so.
fn parse_batch(batch: &CutBatch, options: LoadOptions) -> Vec<Segment> {
    if options.skip_text && !options.keep_raw {
        parse_units::<SkipTexts>(batch, false)
    } else {
        parse_units::<KeepTexts>(batch, options.keep_raw)
    }
}

fn parse_units<T: Texts>(batch: &CutBatch, keep_raw: bool) -> Vec<Segment> {
    let mut segments: Vec<Segment> = Vec::new();
    for (n, unit) in batch.units.iter().enumerate() {
        if segments.last().is_none_or(|s| s.file != unit.file) {
            segments.push(Segment {
                file: unit.file,
                ..Segment::default()
            });
        }
        let Some(seg) = segments.last_mut() else {
            continue;
        };
        if let What::Void(issue) = &unit.what {
            seg.records.clear();
            seg.issues.clear();
            seg.void = true;
            seg.issues.push(issue.clone());
            continue;
        }
        if seg.fatal {
            continue;
        }
        let bytes = &batch.buf[unit.range.clone()];
        let mut cx = Cx::<T> {
            file: unit.file,
            seg,
            // The units left in the batch: at most as many records of any kind.
            room: match unit.what {
                What::Record { .. } => batch.units.len() - n,
                _ => 0,
            },
            keep_raw,
            base: bytes.as_ptr() as usize,
            offset: unit.at.offset,
            meta: None,
            texts: PhantomData,
        };
        match &unit.what {
            What::Issue { issue, fatal } => {
                cx.seg.issues.push(issue.clone());
                cx.seg.fatal |= *fatal;
            }
            What::Void(_) => {}
            What::Whole => {
                let shape = cx.parse_whole(bytes);
                let meta = cx.meta.take();
                cx.seg.whole = Some((shape, meta));
            }
            &What::Record {
                location,
                expected,
                jsonl,
                before,
            } => match std::str::from_utf8(bytes) {
                Ok(text) => cx.parse_record_text(text, location, expected, jsonl),
                Err(_) if jsonl => cx.issue(
                    Place::record(location),
                    IssueKind::NotUtf8,
                    "not UTF-8 text: the line is left out",
                    Severity::Record,
                ),
                Err(e) => {
                    // Where the bad byte is in the file.
                    let (l, c) = line_col(bytes, e.valid_up_to());
                    let (line, column) = if l == 1 {
                        (unit.at.line, unit.at.column + c - 1)
                    } else {
                        (unit.at.line + l - 1, c)
                    };
                    cx.issue(
                        Place::Position { line, column },
                        IssueKind::NotUtf8,
                        format!(
                            "not UTF-8 text: JSON files must be UTF-8 encoded{}",
                            kept(before)
                        ),
                        Severity::File,
                    );
                    if let Some(i) = cx.seg.issues.last_mut() {
                        i.read_before = before;
                    }
                    cx.seg.fatal = true;
                }
            },
        }
    }
    segments
}

/// The end of a message about a problem that stops a file's reading.
fn kept(before: usize) -> String {
    if before > 0 {
        format!("; the {before} record(s) before it were read, the rest of the file was not")
    } else {
        "; the rest of the file was not read".to_string()
    }
}

/// Parses the texts of one unit into a segment.
struct Cx<'s, T> {
    file: usize,
    seg: &'s mut Segment,
    /// How many records this unit and the batch's next ones may hold at most (0: unknown).
    room: usize,
    keep_raw: bool,
    /// Address of the unit's first byte and its offset in the file: a record's span is where
    /// its text lies in the unit.
    base: usize,
    offset: u64,
    meta: Option<serde_json::Value>,
    texts: PhantomData<fn() -> T>,
}

impl<T: Texts> Cx<'_, T> {
    fn issue(
        &mut self,
        location: Place,
        kind: IssueKind,
        message: impl Into<String>,
        severity: Severity,
    ) {
        let issue = Issue::new(String::new(), location, kind, message, severity);
        self.seg.issues.push(issue);
    }

    /// A file that is one JSON object, read whole: a single record, a container whose `format`
    /// came after its arrays, or something the splitter could not cut.
    fn parse_whole(&mut self, bytes: &[u8]) -> &'static str {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(text) => self.parse_json_object(text),
            Err(e) => {
                let (line, column) = line_col(bytes, e.valid_up_to());
                self.issue(
                    Place::Position { line, column },
                    IssueKind::NotUtf8,
                    "not UTF-8 text: JSON files must be UTF-8 encoded",
                    Severity::File,
                );
                "unknown"
            }
        }
    }

    fn parse_json_object(&mut self, text: &str) -> &'static str {
        let mut top = TopLevel::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let result = TopVisitor::<T> {
            top: &mut top,
            texts: PhantomData,
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
                    Place::inside(RecordAt::Root, "format"),
                    IssueKind::UnknownFormat,
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
            self.syntax_issue(&e, text, recovered);
        }
        shape
    }

    /// Takes the records of a container; false when its version is not one this tool reads.
    fn container_records(&mut self, top: &mut TopLevel<'_>, reported: bool) -> bool {
        if let Some(v) = top.version.as_ref()
            && v.as_u64() != Some(u64::from(crate::FORMAT_VERSION))
        {
            self.issue(
                Place::inside(RecordAt::Root, "version"),
                IssueKind::UnsupportedVersion,
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
                Place::inside(RecordAt::Root, &key),
                IssueKind::DuplicateKey,
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

    fn syntax_issue(&mut self, e: &serde_json::Error, text: &str, recovered: usize) {
        self.issue(
            Place::Position {
                line: e.line(),
                column: e.column(),
            },
            visitors::json_error_kind(e, text.as_bytes()),
            format!(
                "invalid JSON: {}{}{}",
                strip_position(e),
                visitors::not_a_json_number(text.as_bytes(), e),
                kept(recovered)
            ),
            Severity::File,
        );
        if let Some(i) = self.seg.issues.last_mut() {
            i.read_before = recovered;
        }
    }

    /// Parses one record's text (a JSONL line, an array element, a bundle entry).
    fn parse_record_text(
        &mut self,
        text: &str,
        location: Location,
        expected: Option<RecordKind>,
        jsonl: bool,
    ) {
        let at = |path: &str| Place::inside(location, path);
        if let Some(&b) = text.as_bytes().iter().find(|b| !b.is_ascii_whitespace())
            && b != b'{'
        {
            self.issue(
                Place::record(location),
                IssueKind::NotAnObject,
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
                Err(bad) => self.issue(
                    at(&bad.path),
                    bad.kind,
                    format!("invalid reported value: {}", bad.message),
                    Severity::Record,
                ),
            }
            return;
        }
        let any = match parse_typed::<AnyRecord<T>>(text) {
            Ok(any) => any,
            Err(bad) => {
                self.issue(at(&bad.path), bad.kind, bad.message, Severity::Record);
                return;
            }
        };
        if jsonl && any.format.is_some() {
            // A bundle written on one line.
            let meta = self.meta.take();
            self.parse_json_object(text);
            self.meta = meta;
            return;
        }
        self.accept_any(any, location, expected, text);
    }

    /// Classifies a parsed record and keeps it, or reports what it lacks.
    fn accept_any(
        &mut self,
        any: AnyRecord<T>,
        location: Location,
        expected: Option<RecordKind>,
        text: &str,
    ) {
        let kind = match expected.or_else(|| any.detect()) {
            Some(k) => k,
            None => {
                self.issue(
                    Place::record(location),
                    IssueKind::NotARecord,
                    "cannot tell what this record is: it has none of `checklist` (question), `answer`, \
                     `items` (judgment), `dimensions` (scalar judgment), `mode` (failure-mode label) \
                     or `reviewer` (review)",
                    Severity::Record,
                );
                return;
            }
        };
        if kind == RecordKind::Review {
            match parse_typed::<Review>(text) {
                Ok(r) => self.push(location, Record::Review(r), text),
                Err(bad) => self.issue(
                    Place::inside(location, &bad.path),
                    IssueKind::InvalidReview,
                    format!("invalid review: {}", bad.message),
                    Severity::Record,
                ),
            }
            return;
        }
        match any.into_record(kind) {
            Ok(mut record) => {
                for (path, message) in clean(&mut record) {
                    self.issue(
                        Place::inside(location, &path),
                        IssueKind::IgnoredEntry,
                        message,
                        Severity::Warning,
                    );
                }
                self.push(location, record, text)
            }
            Err(missing) => self.issue(
                Place::record(location),
                IssueKind::MissingField,
                format!(
                    "invalid {}: missing field(s) {}",
                    kind.noun(),
                    missing.join(", ")
                ),
                Severity::Record,
            ),
        }
    }

    /// Keeps a record; `text` is its JSON text, a slice of the unit's.
    fn push(&mut self, location: Location, record: Record, text: &str) {
        let raw = if self.keep_raw {
            RawValue::from_string(text.to_string()).ok()
        } else {
            None
        };
        let start = self.offset + (text.as_ptr() as usize).wrapping_sub(self.base) as u64;
        let span = Span {
            file: self.file as u32,
            start,
            end: start + text.len() as u64,
        };
        let record = Located {
            file: self.file,
            location,
            record,
            raw,
            span,
        };
        self.seg.records.push(record, self.room);
    }
}

/// Parses one record's bytes (those of its [`Span`]) as a record of `kind`, texts kept: how a
/// text that a load skipped is read back.
pub(crate) fn parse_one(kind: RecordKind, bytes: &[u8]) -> Result<Record, Problem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Problem::new(IssueKind::NotUtf8, "not UTF-8 text"))?;
    let problem = |bad: visitors::Bad| Problem::new(bad.kind, bad.message);
    if kind == RecordKind::Reported {
        return parse_typed::<ReportedValue>(text)
            .map(Record::Reported)
            .map_err(problem);
    }
    if kind == RecordKind::Review {
        return parse_typed::<Review>(text)
            .map(Record::Review)
            .map_err(problem);
    }
    let any = parse_typed::<AnyRecord<KeepTexts>>(text).map_err(problem)?;
    let mut record = any.into_record(kind).map_err(|missing| {
        let message = format!("missing field(s) {}", missing.join(", "));
        Problem::new(IssueKind::MissingField, message)
    })?;
    // Read back as it was loaded; its warnings were given then.
    clean(&mut record);
    Ok(record)
}

/// The parts of a record that are ignored, with where (a path inside it) and why, taken out of
/// it: a question's evidence entries that are no repository path ([`validate::evidence`]).
fn clean(record: &mut Record) -> Vec<(String, String)> {
    match record {
        Record::Question(q) => crate::validate::evidence(q),
        _ => Vec::new(),
    }
}

pub(crate) fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
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

/// Takes every part and gives it back as it came: the stream's parts, unassembled, for the
/// tests of parsing.
#[cfg(test)]
struct KeepParts(Vec<(usize, Records)>);

#[cfg(test)]
impl Assemble for KeepParts {
    fn start(_: LoadOptions) -> Self {
        KeepParts(Vec::new())
    }

    fn would_differ(_: [bool; record::KINDS], _: &Records) -> bool {
        false
    }

    fn add(&mut self, file: usize, _: &str, part: Records) {
        self.0.push((file, part));
    }

    fn undo(self) -> Vec<(usize, Records)> {
        self.0
    }
}

/// Parses files fed in chunks of `chunk` bytes, without assembling them.
#[cfg(test)]
fn parse_chunked(files: &[SourceFile<'_>], options: LoadOptions, chunk: usize) -> Parsed {
    let mut loader = RecordStream::<KeepParts>::new(options);
    for f in files {
        loader.begin_file(f.name);
        for c in f.bytes.chunks(chunk.max(1)) {
            loader.feed(c);
        }
        loader.end_file();
    }
    loader.parsed()
}

#[cfg(test)]
fn parse_files(files: &[SourceFile<'_>], options: LoadOptions) -> Parsed {
    parse_chunked(files, options, 1 << 20)
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

    /// Every shape, and the ways each can go wrong, as one file each.
    fn corpus() -> Vec<String> {
        let bundle = |body: &str| format!(r#"{{"format":"repoprobe-results","version":1,{body}}}"#);
        vec![
            format!("{Q}\n{J}\n"),
            format!("\u{feff}{Q}\r\n\r\n  {J}  \r\n{J}"),
            format!("[{Q},\n{J},\n{{\"oops\": ]"),
            format!("[{Q} {J}]"),
            format!("[{Q}, {J},]"),
            format!("[{Q}, 7, \"x\", null, [1], {J}]  \n"),
            format!("[{Q}] x"),
            format!("[{Q}, {{\"a\": tru}}, {J}]"),
            format!("[{Q}, {J}"),
            format!("[{Q}, \"unterminated"),
            bundle(&format!(r#""meta":{{"x":[1,{{"y":"]"}}]}},"benchmark":[{Q}],"judgments":[{J},{{"question_id":"q1"}}]"#)),
            bundle(&format!(r#""benchmark":[{Q}],"benchmark":[{Q},{Q}],"judgments":[]"#)),
            format!(r#"{{"benchmark":[{Q}],"format":"repoprobe-results","judgments":[{J}]}}"#),
            format!(r#"{{"format":"repoprobe-results","version":2,"judgments":[{J}]}}"#),
            format!(r#"{{"judgments":[{J}],"version":"1","format":"repoprobe-results"}}"#),
            format!("{{\"format\":\"repoprobe-results\",\n\"judgments\":[{J}]}}\n{J}"),
            format!("{}\n{J}\n", bundle(&format!(r#""judgments":[{J}]"#))),
            format!("{}\n", bundle(&format!(r#""judgments":{J}"#))),
            bundle(&format!(r#""judgments":[{J}]"#)).replace("}}]}", "}}]"),
            r#"{"format":"repoprobe-reported","version":1,"values":[{"table":"3","row":"m","column":"Overall","value":1.5},{"table":"3"}],"benchmark":[7]}"#.into(),
            r#"{"format":"something-else","judgments":[]}"#.into(),
            format!("{J}"),
            format!("{{\n  \"question_id\": \"q1\",\n  \"model\": \"m\", \"judge\": \"j\", \"items\": []\n}}\n"),
            format!("{J} {J}\n{J}"),
            format!("{{\"a\": tru}}\n{J}\n"),
            format!("[{Q},\n{}]", J.replace("\"r\"", "\"caf\u{e9} \\\" \\\\ ]}}\"")),
            "hello".into(),
            "  \n ".into(),
            String::new(),
            "\u{feff}".into(),
            "[]".into(),
            "{}".into(),
            "[1 2]".into(),
            "[{\"a\":1}}".into(),
            "{\"a\" 1}".into(),
            "{\"a\": 1,}".into(),
        ]
    }

    fn fingerprint(p: &Parsed) -> String {
        format!("{:?}\n{:?}\n{:?}", p.all(), p.issues, p.files)
    }

    #[test]
    fn chunking_never_changes_what_is_read() {
        let mut files = corpus()
            .into_iter()
            .map(String::into_bytes)
            .collect::<Vec<_>>();
        // Invalid UTF-8 inside an array element, after a record, and in a JSONL line.
        let bad = |text: String| -> Vec<u8> {
            // `é` is 0xc3 0xa9: with 0xff for 0xc3 it is not UTF-8.
            text.into_bytes()
                .into_iter()
                .map(|b| if b == 0xc3 { 0xff } else { b })
                .collect()
        };
        files.push(bad(format!("[{Q},\n  \"é\", {J}]")));
        files.push(b"[{\"id\": \"\xff\"}, {}]".to_vec());
        files.push(bad(format!("{Q}\n{{\"x\": \"é\"}}\n{J}\n")));
        files.push(bad(format!(
            r#"{{"format":"repoprobe-results","judgments":[{J},{{"é":1}}],"benchmark":[{Q}]}}"#
        )));
        for (n, bytes) in files.iter().enumerate() {
            for options in [
                LoadOptions::default(),
                LoadOptions {
                    skip_text: true,
                    ..Default::default()
                },
                LoadOptions {
                    keep_raw: true,
                    ..Default::default()
                },
            ] {
                let source = [SourceFile { name: "f", bytes }];
                let whole = fingerprint(&parse_files(&source, options));
                for chunk in [1, 2, 3, 5, 17, 64] {
                    let got = fingerprint(&parse_chunked(&source, options, chunk));
                    assert_eq!(
                        got,
                        whole,
                        "file {n} ({:?}) in chunks of {chunk}",
                        String::from_utf8_lossy(bytes)
                    );
                }
            }
        }
    }

    #[test]
    fn bad_evidence_entries_are_warnings_located_in_their_record_and_the_question_is_kept() {
        let bench = include_str!("../../../../testdata/golden/benchmark.jsonl");
        let mut q: serde_json::Value = serde_json::from_str(bench.lines().next().unwrap()).unwrap();
        q["checklist"][0]["evidence"] = serde_json::json!([
            "./src/a.py",
            {"path": "src/b.py", "lines": [3, 9], "source": "cited"},
            "/etc/passwd",
            {"path": "x.py", "lines": [4, 1]},
            42
        ]);
        q["checklist"][2]["evidence"] = serde_json::json!(["README.md"]);
        let line = q.to_string();
        for (text, prefix, sep) in [
            // Two lines: a file of one object is read as JSON (`$`).
            (
                format!("{line}\n{}\n", bench.lines().nth(1).unwrap()),
                "line 1",
                ", ",
            ),
            (format!("[{line}]"), "$[0]", "."),
        ] {
            let p = parse("b", &text);
            let at: Vec<String> = p.issues.iter().map(|i| i.location.to_string()).collect();
            let want: Vec<String> = [
                "checklist[0].evidence[2]",
                "checklist[0].evidence[3]",
                "checklist[0].evidence[4]",
                "checklist[2].evidence",
            ]
            .iter()
            .map(|w| format!("{prefix}{sep}{w}"))
            .collect();
            assert_eq!(at, want);
            assert!(p.issues.iter().all(|i| i.severity == Severity::Warning));
            assert!(p.issues[0].message.contains("question \"q1\", item \"k1\""));
            let all = p.all();
            let Record::Question(got) = &all[0].record else {
                panic!("the question is kept: {:?}", all[0].record)
            };
            let paths: Vec<&str> = got.checklist[0]
                .evidence
                .iter()
                .map(|e| e.path.as_str())
                .collect();
            assert_eq!(paths, ["src/a.py", "src/b.py"]);
            assert!(got.checklist[2].evidence.is_empty());
            let bytes = &text.as_bytes()[all[0].span.start as usize..all[0].span.end as usize];
            assert_eq!(
                parse_one(RecordKind::Question, bytes).as_ref(),
                Ok(&all[0].record)
            );
        }
    }

    #[test]
    fn spans_give_each_record_back() {
        for (n, text) in corpus().iter().enumerate() {
            let p = parse(&format!("f{n}"), text);
            for r in &p.all() {
                let bytes = &text.as_bytes()[r.span.start as usize..r.span.end as usize];
                let again = parse_one(r.record.kind(), bytes).unwrap_or_else(|e| {
                    panic!(
                        "file {n}, {:?}: {e}: {:?}",
                        r.location,
                        String::from_utf8_lossy(bytes)
                    )
                });
                assert_eq!(again, r.record, "file {n}");
            }
        }
    }

    #[test]
    fn a_structure_error_stops_the_file_and_a_record_error_does_not() {
        // A missing comma: the records before it are read, nothing after.
        let p = parse("a.json", &format!("[{Q}\n {J}, {J}]"));
        assert_eq!(p.len(), 1);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].severity, Severity::File);
        assert_eq!(p.issues[0].location.to_string(), "line 2, column 2");
        assert!(
            p.issues[0].message.contains("expected `,` or `]`"),
            "{}",
            p.issues[0].message
        );
        assert!(
            p.issues[0]
                .message
                .contains("the 1 record(s) before it were read"),
            "{}",
            p.issues[0].message
        );
        // Invalid JSON inside one element costs that element only.
        let p = parse("a.json", &format!("[{Q}, {{\"a\": tru}}, {J}]"));
        assert_eq!(p.len(), 2);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].severity, Severity::Record);
        assert_eq!(p.issues[0].location.to_string(), "$[1].a");
        // The end of the file inside a bundle's array.
        let p = parse(
            "b.json",
            &format!(r#"{{"format":"repoprobe-results","judgments":[{J},{J}"#),
        );
        assert_eq!(p.len(), 2);
        assert!(
            p.issues[0].message.contains("EOF while parsing a list"),
            "{:?}",
            p.issues
        );
        assert_eq!(p.files[0].shape, "bundle");
    }

    #[test]
    fn a_bundle_whose_format_comes_last_and_one_of_another_version() {
        let p = parse(
            "b.json",
            &format!(r#"{{"benchmark":[{Q}],"judgments":[{J}],"format":"repoprobe-results"}}"#),
        );
        assert_eq!(p.len(), 2, "{:?}", p.issues);
        assert_eq!(p.files[0].shape, "bundle");
        assert_eq!(p.all()[1].location.to_string(), "$.judgments[0]");
        for text in [
            format!(r#"{{"format":"repoprobe-results","version":2,"judgments":[{J}]}}"#),
            format!(r#"{{"format":"repoprobe-results","judgments":[{J}],"version":2}}"#),
        ] {
            let p = parse("b.json", &text);
            assert!(p.is_empty());
            assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
            assert!(p.issues[0].message.contains("unsupported version 2"));
        }
    }

    #[test]
    fn bom_is_skipped_and_crlf_lines_are_read() {
        let text = format!("\u{feff}{Q}\r\n{J}\r\n");
        let p = parse("a.jsonl", &text);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.len(), 2);
        assert_eq!(p.all()[1].record.kind(), RecordKind::Judgment);
        assert_eq!(p.files[0].shape, "jsonl");
    }

    #[test]
    fn json_array_syntax_error_keeps_the_records_before_it() {
        let text = format!("[{Q},\n{J},\n{{\"oops\": ]");
        let p = parse("a.json", &text);
        assert_eq!(p.len(), 2);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].severity, Severity::File);
        assert!(
            p.issues[0].location.to_string().starts_with("line 3"),
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
        assert_eq!(p.len(), 1);
        assert_eq!(
            p.issues[0].location.to_string(),
            "$[1].items[0].score",
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
        assert_eq!(p.issues[0].location.to_string(), "line 2, items[0].score");
    }

    #[test]
    fn bundle_arrays_decide_the_kind_and_missing_fields_are_named() {
        let text = format!(
            r#"{{"format":"repoprobe-results","version":1,"meta":{{"x":1}},"benchmark":[{Q}],"judgments":[{J},{{"question_id":"q1"}}]}}"#
        );
        let p = parse("b.json", &text);
        assert_eq!(p.files[0].shape, "bundle");
        assert_eq!(p.files[0].meta, Some(serde_json::json!({"x": 1})));
        assert_eq!(p.len(), 2);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].location.to_string(), "$.judgments[1]");
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
        assert_eq!(p.len(), 1);
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
        let Record::Judgment(j) = &p.all()[0].record else {
            panic!("not a judgment")
        };
        assert_eq!(j.items[0].rationale.len(), big.len());
    }

    #[test]
    fn skip_text_leaves_rationales_empty_but_still_checks_them() {
        let text = format!("{Q}\n{J}\n");
        let o = LoadOptions {
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
        let Record::Judgment(j) = &p.all()[1].record else {
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
        let Record::Judgment(j) = &p.all()[1].record else {
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
            LoadOptions {
                keep_raw: true,
                ..Default::default()
            },
        );
        assert!(
            p.all()[0]
                .raw
                .as_ref()
                .unwrap()
                .get()
                .contains("prompt_version")
        );
        assert!(parse("a", &text).all()[0].raw.is_none());
    }
}
