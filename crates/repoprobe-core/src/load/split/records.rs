//! Where records are cut: a JSONL file's lines, the elements of a JSON array or of a
//! container's record arrays, and a file that is one object, handed over whole.

use super::super::record::Location;
use super::Splitter;
use super::carry::Cap;
use super::container::Role;
use super::cut::{Output, Pos, Unit, What};
use super::grammar::Phase;
use super::shape::Mode;

impl Splitter {
    /// JSONL: every non-blank line is a record.
    pub(super) fn scan_lines(&mut self, chunk: &[u8], mut i: usize, out: &mut impl Output) {
        while i < chunk.len() {
            if let Cap::None = self.carry.cap {
                self.carry.record(i, self.cursor.pos(i));
            }
            let Some(k) = memchr::memchr(b'\n', &chunk[i..]) else {
                return;
            };
            let nl = i + k;
            self.end_line(chunk, nl, out);
            self.cursor.newline(nl);
            i = nl + 1;
        }
    }

    /// The JSONL line being read ends at `end` of `chunk`.
    pub(super) fn end_line(&mut self, chunk: &[u8], end: usize, out: &mut impl Output) {
        let Some((from, unit, at)) = self.carry.take_record() else {
            return;
        };
        let batch = out.batch();
        let unit = batch.end_record(unit, &chunk[from..end]);
        if batch.buf.len() > unit && batch.buf.last() == Some(&b'\r') {
            batch.buf.pop();
        }
        if batch.buf[unit..].iter().all(u8::is_ascii_whitespace) {
            batch.buf.truncate(unit);
            return;
        }
        batch.units.push(Unit {
            file: self.file,
            range: unit..batch.buf.len(),
            at,
            what: What::Record {
                location: Location::Line(at.line),
                expected: None,
                jsonl: true,
                before: self.records.count,
            },
        });
        self.records.count += 1;
        out.unit_done();
    }

    /// An element of the record array ended just before `end` of `chunk`: it is a record.
    pub(super) fn record_ends(&mut self, chunk: &[u8], end: usize, out: &mut impl Output) {
        self.records.phase = Phase::After;
        let Some((from, unit, at)) = self.carry.take_record() else {
            return;
        };
        let (location, expected) = match (self.mode, self.fields.role) {
            (Mode::Container(_), Role::Records(key, kind)) => {
                (Location::Index(Some(key), self.records.index), Some(kind))
            }
            _ => (Location::Index(None, self.records.index), None),
        };
        let batch = out.batch();
        let unit = batch.end_record(unit, &chunk[from..end]);
        batch.units.push(Unit {
            file: self.file,
            range: unit..batch.buf.len(),
            at,
            what: What::Record {
                location,
                expected,
                jsonl: false,
                before: self.records.count,
            },
        });
        self.records.index += 1;
        self.records.count += 1;
        out.unit_done();
    }

    /// The end of a file kept whole (one object, or an object whose `format` never said it
    /// was a container): all of it is one unit, parsed as one value.
    pub(super) fn hand_whole(&mut self, out: &mut impl Output) {
        let batch = out.batch();
        let start = batch.buf.len();
        batch.buf.extend_from_slice(&self.head);
        batch.units.push(Unit {
            file: self.file,
            range: start..batch.buf.len(),
            at: Pos {
                offset: 0,
                line: 1,
                column: 1,
            },
            what: What::Whole,
        });
        self.head = Vec::new();
        out.unit_done();
    }
}

#[cfg(test)]
mod tests {
    use super::super::sink::cut_every_way;

    /// Every non-blank line is a record, at its own line, without its `\r`; a line is a record
    /// even when its value goes on in the next (its parse then fails, not the file's cut).
    #[test]
    fn jsonl_lines_are_records_and_blank_lines_are_not() {
        let (shape, units) = cut_every_way(b"{\"a\":1}\n\n  \r\n{\"b\":[1,\n2]}\r\n{\"c\":3}");
        assert_eq!(shape, "jsonl");
        assert_eq!(
            units,
            [
                "record Line(1) @1:1 {\"a\":1}",
                "record Line(4) @4:1 {\"b\":[1,",
                "record Line(5) @5:1 2]}",
                "record Line(6) @6:1 {\"c\":3}",
            ]
        );
    }

    /// An array's elements are cut at its own commas only: not at commas or brackets inside a
    /// string or a nested value; any value is an element, its blanks around it not.
    #[test]
    fn array_elements_are_cut_at_top_level_commas() {
        let (shape, units) = cut_every_way(b"[{\"a\":\"x,]\"}, 2 ,\n [3,[4]], \"s\\\"\"]");
        assert_eq!(shape, "json");
        assert_eq!(
            units,
            [
                "record Index(None, 0) @1:2 {\"a\":\"x,]\"}",
                "record Index(None, 1) @1:15 2",
                "record Index(None, 2) @2:2 [3,[4]]",
                "record Index(None, 3) @2:11 \"s\\\"\"",
            ]
        );
        let (_, deep) = cut_every_way(b"[{\"a\":{\"b\":[1,{\"c\":\"]\"}]}}]");
        assert_eq!(
            deep,
            ["record Index(None, 0) @1:2 {\"a\":{\"b\":[1,{\"c\":\"]\"}]}}"]
        );
    }

    /// One object over several lines is one record, handed over whole with its blanks (its
    /// parse decides what it is); so is an object whose `format` names no container.
    #[test]
    fn a_one_object_file_is_handed_over_whole() {
        let text = "  {\"question_id\":\"q\",\n \"x\": 1}\n";
        let (shape, units) = cut_every_way(text.as_bytes());
        assert_eq!(shape, "unknown");
        assert_eq!(units, [format!("whole {text}")]);
        let (_, units) = cut_every_way(b"{\"format\":\"x\",\"answers\":[1]}");
        assert_eq!(units, ["whole {\"format\":\"x\",\"answers\":[1]}"]);
    }

    /// A bundle's records are the elements of its record arrays, each told by its array's key
    /// and index; other keys' values are not records.
    #[test]
    fn a_bundles_records_are_its_arrays_elements() {
        let (shape, units) = cut_every_way(
            b"{\"format\":\"repoprobe-results\",\"version\":1,\"notes\":[{\"n\":1}],\
              \"answers\":[{\"a\":1},{\"b\":2}],\"judgments\":[]}",
        );
        assert_eq!(shape, "bundle");
        assert_eq!(
            units,
            [
                "record Index(Some(\"answers\"), 0) @1:72 {\"a\":1}",
                "record Index(Some(\"answers\"), 1) @1:80 {\"b\":2}",
            ]
        );
    }
}
