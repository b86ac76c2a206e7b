//! Where inside a record's text serde_json stopped, as a serde path (`checklist[2].weight`),
//! read from the text alone. serde_json says where it stopped (a line and a column) but not
//! inside what. Reading the record again through a deserializer that tracks the path
//! (`serde_path_to_error`) would be another copy of every record type's derived code in the
//! site's worker, ~38 KB gzipped of it (issue 56); this walk is one small function. The paths are
//! the ones `serde_path_to_error` gives, which the tests check on many broken records.

/// Which place the error is about when its position could name two: the value that ends there,
/// or the object or array that closes there (a missing field, too few elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Blame {
    /// A value does not fit (its type, its value, a field name): the value or key that ends
    /// at the position, or the value that starts there.
    Value,
    /// An object or array lacks something: the one that closes at the position.
    Container,
    /// A field given twice: the object whose key ends at the position.
    Duplicate,
    /// An enum's unknown variant: the value that ends at the position (a name), or the object
    /// whose key ends there (a variant with its content, `{"name": ...}`).
    Variant,
    /// The JSON breaks: the value being read where it breaks.
    Syntax,
}

/// The serde path at serde_json's `line` and `column` (1-based; 0 when it gave none) of
/// `text`, as `serde_path_to_error` writes it: `.` for the whole value, and `""` when the JSON
/// breaks after the whole value (trailing characters).
pub(super) fn path_at(text: &str, line: usize, column: usize, blame: Blame) -> String {
    let target = offset(text.as_bytes(), line, column);
    let mut walk = Walk {
        text,
        at: 0,
        target,
        blame,
        path: Vec::new(),
    };
    walk.ws();
    match walk.value(0) {
        Err(Stop::Found(path)) => path,
        Err(Stop::Broken) => display(&walk.path),
        // The whole value read: what follows it is the fault, or the position named none of
        // its places (then the whole value).
        Ok(()) if blame == Blame::Syntax => String::new(),
        Ok(()) => ".".to_string(),
    }
}

/// The byte offset serde_json's line and column point at: the byte it would read next (its
/// column counts the bytes of the line read so far).
pub(super) fn offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let start: usize = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(<[u8]>::len)
        .sum();
    start + column
}

/// One step of a path: an array's element, an object's member, or a member whose key is not
/// read yet.
enum Segment {
    Index(usize),
    Key(String),
    Unknown,
}

/// A path as `serde_path_to_error` displays it.
fn display(path: &[Segment]) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
            Segment::Key(_) | Segment::Unknown => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(match segment {
                    Segment::Key(k) => k,
                    _ => "?",
                });
            }
        }
    }
    out
}

/// Why the walk stopped before the end of the value.
enum Stop {
    /// The place the position names.
    Found(String),
    /// The JSON breaks here (the open values are the path).
    Broken,
}

/// serde_json's nesting limit: its 128th open array or object is broken JSON (so the walk's
/// recursion is bounded too).
const DEPTH: usize = 128;

struct Walk<'a> {
    text: &'a str,
    at: usize,
    target: usize,
    blame: Blame,
    path: Vec<Segment>,
}

impl Walk<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn found(&self) -> Stop {
        Stop::Found(display(&self.path))
    }

    /// A value at `self.at` (its segment already on the path), up to its last byte.
    fn value(&mut self, depth: usize) -> Result<(), Stop> {
        if self.at == self.target && self.on_values() {
            return Err(self.found());
        }
        match self.peek() {
            Some(b'{') if depth + 1 < DEPTH => self.object(depth)?,
            Some(b'[') if depth + 1 < DEPTH => self.array(depth)?,
            Some(b'"') => {
                self.string()?;
            }
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.literal(b"true")?,
            Some(b'f') => self.literal(b"false")?,
            Some(b'n') => self.literal(b"null")?,
            _ => return Err(Stop::Broken),
        }
        if self.at == self.target && self.on_values() {
            return Err(self.found());
        }
        Ok(())
    }

    /// The position names a value that starts or ends there.
    fn on_values(&self) -> bool {
        matches!(self.blame, Blame::Value | Blame::Variant)
    }

    fn object(&mut self, depth: usize) -> Result<(), Stop> {
        self.at += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            return self.close();
        }
        loop {
            // Until its key is read, serde_path_to_error names a member `?`.
            self.path.push(Segment::Unknown);
            if self.peek() != Some(b'"') {
                return Err(Stop::Broken);
            }
            let key = self.string()?;
            self.path.pop();
            if self.at == self.target {
                match self.blame {
                    // The key read, and refused (an unknown field): the member.
                    Blame::Value => {
                        self.path.push(Segment::Key(key));
                        return Err(self.found());
                    }
                    // The key read, and a field already had it, or it names no variant: the
                    // object.
                    Blame::Duplicate | Blame::Variant => return Err(self.found()),
                    Blame::Container | Blame::Syntax => {}
                }
            }
            self.ws();
            if self.peek() != Some(b':') {
                return Err(Stop::Broken);
            }
            self.at += 1;
            // serde_json reads the value's leading white space inside the value (the path
            // names the member from the colon on), unlike an array element's.
            self.path.push(Segment::Key(key));
            self.ws();
            self.value(depth + 1)?;
            self.path.pop();
            self.ws();
            match self.more(b'}') {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                // Read as the start of the next member.
                Err(Stop::Broken) => {
                    self.path.push(Segment::Unknown);
                    return Err(Stop::Broken);
                }
                Err(found) => return Err(found),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Stop> {
        self.at += 1;
        self.ws();
        if self.peek() == Some(b']') {
            return self.close();
        }
        let mut index = 0;
        loop {
            match self.peek() {
                None | Some(b']') => return Err(Stop::Broken),
                Some(_) => {}
            }
            self.path.push(Segment::Index(index));
            self.value(depth + 1)?;
            self.path.pop();
            self.ws();
            if !self.more(b']')? {
                return Ok(());
            }
            index += 1;
        }
    }

    /// After a member or an element: `true` when a comma says another follows, `false` when
    /// `close` ends the object or array (read, see [`Walk::close`]).
    fn more(&mut self, close: u8) -> Result<bool, Stop> {
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                self.ws();
                Ok(true)
            }
            Some(c) if c == close => self.close().map(|()| false),
            _ => Err(Stop::Broken),
        }
    }

    /// The closing bracket at `self.at`. serde_json reads it before it says what the object
    /// or array lacks: the position just after it names the container.
    fn close(&mut self) -> Result<(), Stop> {
        self.at += 1;
        if self.at == self.target && self.blame == Blame::Container {
            return Err(self.found());
        }
        Ok(())
    }

    /// A string at `self.at`, and its text (an escape serde_json refuses breaks the JSON).
    fn string(&mut self) -> Result<String, Stop> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        loop {
            match self.peek() {
                None | Some(0..=0x1f) => return Err(Stop::Broken),
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    self.at += 2;
                }
                Some(_) => self.at += 1,
            }
        }
        self.at += 1;
        let raw = &self.text[start..self.at];
        if !escaped {
            return Ok(raw[1..raw.len() - 1].to_string());
        }
        serde_json::from_str::<String>(raw).map_err(|_| Stop::Broken)
    }

    /// A number at `self.at`, as serde_json reads one: a `01`, `1.`, `-` or `1e999` breaks
    /// the JSON inside it, a `1-1` after its `1`.
    fn number(&mut self) -> Result<(), Stop> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(Stop::Broken);
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(Stop::Broken),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        match serde_json::from_str::<f64>(&self.text[start..self.at]) {
            Ok(_) => Ok(()),
            Err(_) => Err(Stop::Broken),
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Result<(), Stop> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(Stop::Broken);
        }
        self.digits();
        Ok(())
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        if self.text.as_bytes()[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Stop::Broken)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::kinded::where_and_why;
    use super::super::visitors::{AnyRecord, KeepTexts, SkipTexts, parse_typed};
    use crate::model::{ReportedValue, Review};
    use serde::de::DeserializeOwned;

    /// Records of every kind the loader reads, nested values included (an agent block with
    /// its maps and lists, a checklist, a review's criteria, texts beyond ASCII and escapes).
    const RECORDS: [&str; 9] = [
        r#"{"id": "s", "names": {"a": 2, "b": 4}, "pair": [1, "b"], "deep": [[[[{"a": [[1]]}]]]]}"#,
        r#"{"id": "q1", "repo": {"name": "o/r", "commit": "abc"}, "category": "c", "question": "Q?", "reference_answer": "A.", "checklist": [{"id": "c1", "text": "t", "weight": 2, "kind": "fact"}, {"id": "c2", "text": "u", "weight": 1, "kind": "fact"}]}"#,
        r#"{"question_id": "q1", "model": "A", "attempt": 0, "answer": "a\n\"b\"", "agent": {"name": "claude", "turns": 3, "tool_calls": {"read": 2, "grep": 1}, "files_read": ["a.rs", "b.rs"], "changes": {"files": [{"path": "x", "kind": "modified"}]}, "exit_code": -1, "extra": [1, {"y": null}]}, "usage": {"input_tokens": 10, "output_tokens": 2}, "duration_s": 1.5, "error": null}"#,
        r#"{"question_id": "q1", "model": "A", "attempt": 1, "judge": "j", "judge_run": 0, "items": [{"id": "c1", "score": 1, "rationale": "r"}, {"id": "c2", "score": 0.5}], "rationale": "all"}"#,
        r#"{"question_id": "q1", "model": "A", "attempt": 0, "judge": "j", "dimensions": {"correct": 3, "complete": 2}, "max_per_dimension": 5}"#,
        r#"{"question_id": "q1", "model": "A", "attempt": 0, "classifier": "c", "mode": "hallucination", "rationale": "made up"}"#,
        r#"{"question_id": "c01", "reviewer": "ann", "role": "reviewer", "criteria": {"qa_consistency": true, "checklist_quality": true, "task_validity": false, "code_relevance": true}, "decision": "reject", "reviewed_at": "2026-03-01T12:00:00Z", "note": "né ✓ \u00e9"}"#,
        r#"{"table": "3", "group": "", "row": "GPT-5.2", "column": "overall", "value": 62.7}"#,
        r#"[{"a": 1}, [true, "s"]]"#,
    ];

    /// What the records' types do not have: an unknown field refused, a tuple, nesting deeper
    /// than serde_json reads. (Not a map with number keys: the oracle's tree gives its keys as
    /// strings, which serde_json reads as numbers, so the oracle is wrong there.)
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        id: String,
        names: Option<std::collections::BTreeMap<String, u32>>,
        pair: Option<(u8, String)>,
        deep: Option<serde_json::Value>,
    }

    /// What replaces a scalar: every JSON type, values out of range, a name no enum has.
    const REPLACEMENTS: [&str; 12] = [
        r#""x""#,
        "-1",
        "1.5",
        "null",
        "[]",
        "{}",
        "true",
        "[1]",
        r#"{"z": 1}"#,
        r#""gamma""#,
        "4294967296",
        r#"[{"id": 1}]"#,
    ];

    /// The scalars of `text` (strings, numbers, literals) by byte span, and whether each is a key.
    fn scalars(text: &str) -> Vec<(usize, usize, bool)> {
        let b = text.as_bytes();
        let (mut out, mut i) = (Vec::new(), 0);
        while i < b.len() {
            let start = i;
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                    i += 1;
                    while i < b.len() && b[i].is_ascii_alphanumeric() || b.get(i) == Some(&b'.') {
                        i += 1;
                    }
                }
                _ => {
                    i += 1;
                    continue;
                }
            }
            let rest = text[i.min(b.len())..].trim_start();
            out.push((start, i.min(b.len()), rest.starts_with(':')));
        }
        out
    }

    /// Broken and ill-fitting versions of `text`.
    fn variants(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let spans = scalars(text);
        let keys: Vec<&str> = spans
            .iter()
            .filter(|s| s.2)
            .map(|s| &text[s.0..s.1])
            .collect();
        for &(start, end, is_key) in &spans {
            let with = |r: &str| format!("{}{r}{}", &text[..start], &text[end..]);
            if is_key {
                // Another key here: a duplicate, or a field lost and an unknown one.
                out.extend(keys.iter().map(|k| with(k)));
                out.push(with(r#""zz""#));
            } else {
                out.extend(REPLACEMENTS.iter().map(|r| with(r)));
            }
        }
        let bounds = (0..text.len()).filter(|&i| text.is_char_boundary(i));
        for i in bounds {
            out.push(text[..i].to_string());
            for insert in [",", "}", "]", "x", "\"", ":", " 1", "\\"] {
                out.push(format!("{}{insert}{}", &text[..i], &text[i..]));
            }
        }
        out
    }

    /// Where and why, read from serde_json's position, against the tracked reading.
    fn compare<T: DeserializeOwned>(text: &str, seen: &mut usize, diffs: &mut Vec<String>) {
        let ours = parse_typed::<T>(text)
            .err()
            .map(|b| (b.path, b.kind, b.message));
        let theirs = where_and_why::<T>(text);
        *seen += usize::from(theirs.is_some());
        if ours != theirs && diffs.len() < 25 {
            let d = format!("  ours   {ours:?}\n  theirs {theirs:?}");
            if !diffs.iter().any(|x: &String| x.ends_with(&d)) {
                diffs.push(format!("{text}\n{d}"));
            }
        }
    }

    /// Every broken or ill-fitting variant of every kind of record gets the path, the kind and
    /// the message the tracked reading gave.
    #[test]
    fn paths_and_kinds_are_the_tracked_readings() {
        let (mut diffs, mut seen) = (Vec::new(), 0);
        for record in RECORDS {
            for text in variants(record) {
                compare::<AnyRecord<KeepTexts>>(&text, &mut seen, &mut diffs);
                compare::<AnyRecord<SkipTexts>>(&text, &mut seen, &mut diffs);
                compare::<Review>(&text, &mut seen, &mut diffs);
                compare::<ReportedValue>(&text, &mut seen, &mut diffs);
                compare::<Strict>(&text, &mut seen, &mut diffs);
            }
        }
        // Nested deeper than serde_json reads (128), broken at the bottom and on the way.
        let deep = format!(
            "{{\"id\": \"s\", \"deep\": {}1{}}}",
            "[".repeat(140),
            "]".repeat(140)
        );
        for text in [
            deep.clone(),
            deep.replace("1]", "x]"),
            deep[..200].to_string(),
        ] {
            compare::<Strict>(&text, &mut seen, &mut diffs);
            compare::<AnyRecord<KeepTexts>>(&text, &mut seen, &mut diffs);
        }
        assert!(seen > 10_000, "only {seen} failed readings compared");
        eprintln!("{seen} failed readings compared");
        assert!(
            diffs.is_empty(),
            "of {seen}, these differ (the first 25 at most):\n{}",
            diffs.join("\n")
        );
    }
}
