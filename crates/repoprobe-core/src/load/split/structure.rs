//! The scan of arrays and objects: strings skipped, brackets matched, and at the levels that
//! matter (the array of records, the container object) each comma, colon and value checked
//! against the [`grammar`](super::grammar), so that a record's bytes are known to begin and end
//! where the scan says. Deeper inside a record only strings, brackets and newlines are looked at.

use super::bytes::{STRUCTURAL, string_stop};
use super::carry::Cap;
use super::container::Role;
use super::cut::Output;
use super::grammar::{Fatal, Phase, close_allowed, comma_allowed, expected_after};
use super::shape::Mode;
use super::{Flow, MAX_DEPTH, Splitter};
use crate::issue::IssueKind;

impl Splitter {
    /// Arrays and objects: strings, brackets, commas and colons, and the levels that matter.
    pub(super) fn scan_structure(
        &mut self,
        chunk: &[u8],
        mut i: usize,
        out: &mut impl Output,
    ) -> Result<Flow, Fatal> {
        let n = chunk.len();
        while i < n {
            if let Some(mode) = self.restart.take() {
                return Ok(Flow::Restart(mode));
            }
            if self.in_string {
                match self.scan_string(chunk, i, out)? {
                    Some(next) => i = next,
                    None => return Ok(Flow::Continue),
                }
                continue;
            }
            let depth = self.stack.len();
            if depth == 0 && self.top_lines.is_closed() {
                if let Some(flow) = self.trailing(chunk, i, out)? {
                    return Ok(flow);
                }
                i += 1;
                continue;
            }
            // Deep inside a record only strings, brackets and newlines matter.
            if depth > self.watched() {
                while i < n && !STRUCTURAL[chunk[i] as usize] {
                    i += 1;
                }
                if i == n {
                    break;
                }
            }
            let b = chunk[i];
            match b {
                b'"' => {
                    if self.scalar {
                        return Err(Fatal(
                            i,
                            IssueKind::BrokenJson,
                            expected_after(self.closing(depth)),
                        ));
                    }
                    self.value_begins(depth, i, b)?;
                    self.in_string = true;
                }
                b'{' | b'[' => self.open(depth, i, b)?,
                b'}' | b']' => self.close(depth, chunk, i, out)?,
                b',' | b':' => {
                    self.end_scalar(chunk, i, out)?;
                    self.separator(depth, i, b)?;
                }
                b'\n' => {
                    self.end_scalar(chunk, i, out)?;
                    self.newline(i);
                }
                b' ' | b'\t' | b'\r' => self.end_scalar(chunk, i, out)?,
                _ => {
                    if !self.scalar && depth <= self.watched() {
                        self.value_begins(depth, i, b)?;
                        self.scalar = true;
                    }
                }
            }
            i += 1;
        }
        if let Some(mode) = self.restart.take() {
            return Ok(Flow::Restart(mode));
        }
        Ok(Flow::Continue)
    }

    /// Inside a string from `i`: the position after the byte that ends the scan (an escape,
    /// a newline, the closing quote), or `None` when the chunk ends first.
    #[inline]
    fn scan_string(
        &mut self,
        chunk: &[u8],
        i: usize,
        out: &mut impl Output,
    ) -> Result<Option<usize>, Fatal> {
        if self.escaped {
            self.escaped = false;
            return Ok(Some(i + 1));
        }
        let Some(k) = string_stop(&chunk[i..]) else {
            return Ok(None);
        };
        let j = i + k;
        match chunk[j] {
            b'\\' => self.escaped = true,
            b'\n' => self.newline(j),
            _ => {
                self.in_string = false;
                self.string_ended(chunk, j + 1, out)?;
            }
        }
        Ok(Some(j + 1))
    }

    /// A `{` or `[` at `i`, `depth` levels in: the level pushed, and the file's container or
    /// record array (`records.level`) opened when it is one.
    #[inline]
    fn open(&mut self, depth: usize, i: usize, b: u8) -> Result<(), Fatal> {
        if self.scalar {
            return Err(Fatal(
                i,
                IssueKind::BrokenJson,
                expected_after(self.closing(depth)),
            ));
        }
        self.value_begins(depth, i, b)?;
        if depth >= MAX_DEPTH && self.mode != Mode::Head {
            return Err(Fatal(
                i,
                IssueKind::NestedTooDeep,
                "recursion limit exceeded".into(),
            ));
        }
        self.stack.push(b);
        if depth == 0 {
            self.top_lines.opened(self.cursor.line());
            if self.mode == Mode::Array {
                self.records.level = 1;
                self.records.phase = Phase::Open;
            } else {
                self.top = Phase::Open;
            }
        } else if depth == 1
            && self.mode.is_object()
            && self.top == Phase::In
            && matches!(self.fields.role, Role::Records(..))
        {
            self.records.level = 2;
            self.records.phase = Phase::Open;
            self.records.index = 0;
        }
        Ok(())
    }

    /// A `}` or `]` at `i`, `depth` levels in: it must close the level open, where a value or
    /// the container may end.
    #[inline]
    fn close(
        &mut self,
        depth: usize,
        chunk: &[u8],
        i: usize,
        out: &mut impl Output,
    ) -> Result<(), Fatal> {
        let b = chunk[i];
        self.end_scalar(chunk, i, out)?;
        let open = if b == b'}' { b'{' } else { b'[' };
        if self.stack.last() != Some(&open) {
            return Err(Fatal(
                i,
                IssueKind::BrokenJson,
                format!("unexpected `{}`", b as char),
            ));
        }
        if self.at_records(depth) {
            close_allowed(self.records.phase, i)?;
        } else if depth == 1 && self.mode.is_object() {
            close_allowed(self.top, i)?;
        }
        self.stack.pop();
        let depth = depth - 1;
        if depth == 1 && self.records.level == 2 {
            // The container's record array ended.
            self.records.level = 0;
        }
        if depth == 0 {
            self.top_lines.closed(self.cursor.line());
            self.records.level = 0;
        } else {
            self.value_may_end(depth, chunk, i + 1, out)?;
        }
        Ok(())
    }

    /// A `,` or `:` at `i`, `depth` levels in (a scalar before it ended): between records, or
    /// between the container's keys and values.
    #[inline]
    fn separator(&mut self, depth: usize, i: usize, b: u8) -> Result<(), Fatal> {
        if b == b',' {
            if self.at_records(depth) {
                comma_allowed(self.records.phase, i, true)?;
                self.records.phase = Phase::Next;
            } else if depth == 1 && self.mode.is_object() {
                comma_allowed(self.top, i, false)?;
                self.top = Phase::Next;
            }
        } else if depth == 1 && self.mode.is_object() {
            if self.top != Phase::Colon {
                return Err(Fatal(i, IssueKind::BrokenJson, "unexpected `:`".into()));
            }
            self.top = Phase::Value;
        }
        Ok(())
    }

    fn newline(&mut self, i: usize) {
        self.cursor.newline(i);
        if self.stack.is_empty() {
            self.top_lines.newline();
        }
    }

    fn at_records(&self, depth: usize) -> bool {
        self.records.level != 0 && depth == self.records.level
    }

    /// The deepest level whose values the splitter watches.
    fn watched(&self) -> usize {
        self.records.level.max(1)
    }

    fn closing(&self, depth: usize) -> u8 {
        match depth.checked_sub(1).and_then(|d| self.stack.get(d)) {
            Some(b'{') => b'}',
            _ => b']',
        }
    }

    /// Content after the top-level value (`None`: whitespace, read on).
    fn trailing(
        &mut self,
        chunk: &[u8],
        i: usize,
        out: &mut impl Output,
    ) -> Result<Option<Flow>, Fatal> {
        let b = chunk[i];
        if b == b'\n' {
            self.newline(i);
            return Ok(None);
        }
        if b.is_ascii_whitespace() {
            return Ok(None);
        }
        // JSONL when the first object was one line and another line follows (the rule of
        // files read whole: a single object, on one line or many, is one JSON value).
        let jsonl = self.mode.is_object() && self.top_lines.one_line_then_more();
        match self.mode {
            Mode::Head if jsonl => Ok(Some(Flow::Restart(Mode::Jsonl))),
            Mode::Head => Err(Fatal(
                i,
                IssueKind::BrokenJson,
                "trailing characters".into(),
            )),
            Mode::Container(_) if jsonl => {
                // A bundle written on one line, then more lines: JSONL whose first line was
                // that bundle (its records are cut already).
                self.end_container(out);
                self.mode = Mode::Jsonl;
                self.shape = "jsonl";
                Ok(Some(Flow::Switch(i)))
            }
            _ => Err(Fatal(
                i,
                IssueKind::BrokenJson,
                "trailing characters".into(),
            )),
        }
    }

    /// A value (or key) starts at `i` with byte `b` at `depth`.
    fn value_begins(&mut self, depth: usize, i: usize, b: u8) -> Result<(), Fatal> {
        if self.at_records(depth) {
            match self.records.phase {
                Phase::Open | Phase::Next => {
                    self.records.phase = Phase::In;
                    self.carry.record(i, self.cursor.pos(i));
                }
                _ => return Err(Fatal(i, IssueKind::BrokenJson, expected_after(b']'))),
            }
        } else if depth == 1 && self.mode.is_object() {
            match self.top {
                Phase::Open | Phase::Next => {
                    if b != b'"' {
                        return Err(Fatal(
                            i,
                            IssueKind::BrokenJson,
                            "key must be a string".into(),
                        ));
                    }
                    self.top = Phase::Key;
                    self.carry.key.clear();
                    self.carry.cap = Cap::Key { from: i };
                }
                Phase::Value => {
                    self.top = Phase::In;
                    match self.fields.role {
                        Role::Format | Role::Version | Role::Meta => {
                            self.carry.scratch.clear();
                            self.carry.cap = Cap::Scratch { from: i };
                        }
                        Role::Records(..) if b != b'[' => {
                            return Err(Fatal(
                                i,
                                IssueKind::WrongType,
                                "invalid type: expected an array of records".into(),
                            ));
                        }
                        _ => {}
                    }
                }
                Phase::Colon => return Err(Fatal(i, IssueKind::BrokenJson, "expected `:`".into())),
                _ => return Err(Fatal(i, IssueKind::BrokenJson, expected_after(b'}'))),
            }
        }
        Ok(())
    }

    fn end_scalar(&mut self, chunk: &[u8], i: usize, out: &mut impl Output) -> Result<(), Fatal> {
        if self.scalar {
            self.scalar = false;
            self.value_ends(self.stack.len(), chunk, i, out);
        }
        Ok(())
    }

    fn string_ended(
        &mut self,
        chunk: &[u8],
        end: usize,
        out: &mut impl Output,
    ) -> Result<(), Fatal> {
        let depth = self.stack.len();
        if depth == 1 && self.mode.is_object() && self.top == Phase::Key {
            self.carry.end_key(chunk, end);
            self.top = Phase::Colon;
            self.fields.role = self.key_role(out);
            return Ok(());
        }
        self.value_may_end(depth, chunk, end, out)
    }

    /// After a string or a closing bracket at `depth`: the value being read there may be done.
    fn value_may_end(
        &mut self,
        depth: usize,
        chunk: &[u8],
        end: usize,
        out: &mut impl Output,
    ) -> Result<(), Fatal> {
        if (self.at_records(depth) && self.records.phase == Phase::In)
            || (depth == 1 && self.mode.is_object() && self.top == Phase::In)
        {
            self.value_ends(depth, chunk, end, out);
        }
        Ok(())
    }

    /// The value at `depth` ended just before `end` of `chunk`.
    fn value_ends(&mut self, depth: usize, chunk: &[u8], end: usize, out: &mut impl Output) {
        if self.at_records(depth) {
            self.record_ends(chunk, end, out);
        } else if depth == 1 && self.mode.is_object() {
            self.top = Phase::After;
            if self.carry.end_scratch(chunk, end) {
                self.field_read(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sink::cut_every_way;

    /// What the scan finds broken between records ends the file there, worded as the JSON
    /// parser words it, with the records before it kept.
    #[test]
    fn broken_structure_between_records_ends_the_file() {
        let cases: [(&[u8], &str); 4] = [
            (b"[{\"a\":1},{\"b\":2},]", "trailing comma"),
            (b"[{\"a\":1} {\"b\":2}]", "expected `,` or `]`"),
            (b"[{\"a\":1}}", "unexpected `}`"),
            (b"[{\"a\":1}] x", "trailing characters"),
        ];
        for (bytes, message) in cases {
            let (_, units) = cut_every_way(bytes);
            assert_eq!(
                units.len(),
                units.iter().filter(|u| u.starts_with("record")).count() + 1
            );
            assert_eq!(units[0], "record Index(None, 0) @1:2 {\"a\":1}");
            let last = units.last().map(String::as_str).unwrap_or_default();
            assert!(
                last.starts_with("issue fatal BrokenJson invalid JSON: ")
                    && last.contains(message)
                    && last.ends_with("before it were read, the rest of the file was not"),
                "{last}"
            );
        }
    }

    /// In the container object: keys must be strings, a colon must separate, and a record
    /// array must be an array.
    #[test]
    fn the_container_objects_grammar_is_checked() {
        let (_, units) = cut_every_way(b"{\"format\":\"repoprobe-results\" \"x\":1}");
        assert_eq!(
            units,
            [
                "issue fatal BrokenJson invalid JSON: expected `,` or `}`; the rest of the file was not read"
            ]
        );
        let (_, units) = cut_every_way(b"{\"format\":\"repoprobe-results\",\"answers\":{}}");
        assert_eq!(
            units,
            [
                "issue fatal WrongType invalid JSON: invalid type: expected an array of records; the rest of the file was not read"
            ]
        );
        let (_, units) = cut_every_way(b"{\"format\":\"repoprobe-results\",1:[]}");
        assert!(units[0].contains("key must be a string"), "{units:?}");
    }

    /// A value broken inside a record is that record's problem, found by its parse: the scan
    /// cuts it as it is.
    #[test]
    fn a_record_broken_inside_is_still_cut() {
        let (_, units) = cut_every_way(b"[{\"a\":1},\n {\"b\": tru}]");
        assert_eq!(units[1], "record Index(None, 1) @2:2 {\"b\": tru}");
        assert_eq!(units.len(), 2);
    }

    /// An object on one line followed by another line makes the file JSONL, a bundle's records
    /// cut before it included; on several lines, what follows it is an error.
    #[test]
    fn a_first_object_on_one_line_then_more_lines_is_jsonl() {
        let (shape, units) = cut_every_way(b"{\"a\":1}\n{\"b\":2}");
        assert_eq!(shape, "jsonl");
        assert_eq!(
            units,
            [
                "record Line(1) @1:1 {\"a\":1}",
                "record Line(2) @2:1 {\"b\":2}"
            ]
        );
        let (shape, units) =
            cut_every_way(b"{\"format\":\"repoprobe-results\",\"answers\":[{\"a\":1}]}\n{\"x\":2}");
        assert_eq!(shape, "jsonl");
        assert_eq!(
            units,
            [
                "record Index(Some(\"answers\"), 0) @1:42 {\"a\":1}",
                "record Line(2) @2:1 {\"x\":2}",
            ]
        );
        let (shape, units) = cut_every_way(b"{\"a\":\n1} x");
        assert_eq!((shape, units.len()), ("unknown", 1));
        assert!(units[0].starts_with("whole "), "{units:?}");
    }
}
