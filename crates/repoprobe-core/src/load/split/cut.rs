//! What the splitter hands on: units cut from files (a record's bytes, a whole file, or a
//! problem found while cutting), collected in a batch for one parse.

use super::super::record::{Location, RecordKind};
use crate::issue::Issue;
use std::ops::Range;

/// Units cut from one or more files, their bytes side by side: what one parse takes, on this
/// thread or another.
#[derive(Debug, Default)]
pub(in crate::load) struct CutBatch {
    pub(in crate::load) buf: Vec<u8>,
    pub(in crate::load) units: Vec<Unit>,
}

impl CutBatch {
    /// A batch that holds `bytes` of records without growing (a record that ends past them
    /// still fits: the buffer grows for it).
    pub(in crate::load) fn with_capacity(bytes: usize) -> Self {
        CutBatch {
            // Room for the record that crosses the mark.
            buf: Vec::with_capacity(bytes + bytes / 4),
            units: Vec::new(),
        }
    }

    /// Appends a record's last bytes; its first ones went in at `unit` when it crossed a chunk
    /// (`usize::MAX`: it lies within this chunk). Where the record starts in `buf`.
    pub(super) fn end_record(&mut self, unit: usize, tail: &[u8]) -> usize {
        let unit = if unit == usize::MAX {
            self.buf.len()
        } else {
            unit
        };
        self.buf.extend_from_slice(tail);
        unit
    }
}

/// One thing to parse, or a problem found while cutting.
#[derive(Debug)]
pub(in crate::load) struct Unit {
    /// The file's number in load order.
    pub(in crate::load) file: usize,
    /// Its bytes in [`CutBatch::buf`] (empty for issues).
    pub(in crate::load) range: Range<usize>,
    /// Where those bytes start in the file.
    pub(in crate::load) at: Pos,
    pub(in crate::load) what: What,
}

/// A place in a file: byte offset, and line and column (1-based) as messages give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::load) struct Pos {
    pub(in crate::load) offset: u64,
    pub(in crate::load) line: usize,
    pub(in crate::load) column: usize,
}

#[derive(Debug)]
pub(in crate::load) enum What {
    /// One record's text. `before`: the records cut from the file before this one.
    Record {
        location: Location,
        expected: Option<RecordKind>,
        jsonl: bool,
        before: usize,
    },
    /// A whole file that is one JSON object, not cut: parsed as one value.
    Whole,
    /// A problem with the file. `fatal`: nothing after it in the file is read.
    Issue { issue: Issue, fatal: bool },
    /// The container's version is not one this tool reads: every record of the file is left
    /// out, and this issue says why.
    Void(Issue),
}

/// Where cut units go: the loader's current batch, handed on when full.
pub(in crate::load) trait Output {
    fn batch(&mut self) -> &mut CutBatch;
    /// Called after each unit: the only moment a batch may be handed on (no unit is half in it).
    fn unit_done(&mut self);
}

#[cfg(test)]
mod tests {
    use super::CutBatch;

    /// A record within one chunk starts where the buffer ends; one whose first bytes went in
    /// with an earlier chunk starts where they did, and its last bytes follow them.
    #[test]
    fn a_record_starts_where_its_first_bytes_went() {
        let mut batch = CutBatch::with_capacity(16);
        assert!(batch.buf.capacity() >= 20);
        batch.buf.extend_from_slice(b"ab");
        assert_eq!(batch.end_record(usize::MAX, b"cd"), 2);
        batch.buf.extend_from_slice(b"{\"x\":");
        assert_eq!(batch.end_record(4, b"1}"), 4);
        assert_eq!(batch.buf, b"abcd{\"x\":1}");
    }
}
