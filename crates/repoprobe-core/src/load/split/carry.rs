//! The bytes being collected when a slice ends: a record's (into the batch, so a record that
//! crosses chunks is whole there), the container's current key, or a field's value to read.
//! What is collected is known by where it starts in the current slice, and moved out at the
//! slice's end.

use super::cut::{CutBatch, Pos};

/// Bytes being collected, and from where in the current chunk.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cap {
    None,
    /// A record (or JSONL line) into the batch, from `unit` in its buffer (`usize::MAX`: none
    /// of it is there yet).
    Record {
        from: usize,
        unit: usize,
        at: Pos,
    },
    Key {
        from: usize,
    },
    Scratch {
        from: usize,
    },
}

/// What is being collected, and the buffers for a key and a field's value that cross chunks.
#[derive(Debug)]
pub(super) struct Carry {
    pub(super) cap: Cap,
    pub(super) key: Vec<u8>,
    pub(super) scratch: Vec<u8>,
}

impl Carry {
    pub(super) fn new() -> Self {
        Carry {
            cap: Cap::None,
            key: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A record begins at `from` of the slice, at `at` in its file.
    pub(super) fn record(&mut self, from: usize, at: Pos) {
        self.cap = Cap::Record {
            from,
            unit: usize::MAX,
            at,
        };
    }

    /// At the end of a slice: what is being collected keeps its bytes so far (a record's in
    /// `batch`), and goes on from the next slice's first byte.
    pub(super) fn flush(&mut self, chunk: &[u8], batch: &mut CutBatch) {
        match &mut self.cap {
            Cap::None => {}
            Cap::Record { from, unit, .. } => {
                if *unit == usize::MAX {
                    *unit = batch.buf.len();
                }
                batch.buf.extend_from_slice(&chunk[*from..]);
                *from = 0;
            }
            Cap::Key { from } => {
                self.key.extend_from_slice(&chunk[*from..]);
                *from = 0;
            }
            Cap::Scratch { from } => {
                self.scratch.extend_from_slice(&chunk[*from..]);
                *from = 0;
            }
        }
    }

    /// The record being collected, if one is, and nothing collected any more.
    pub(super) fn take_record(&mut self) -> Option<(usize, usize, Pos)> {
        match std::mem::replace(&mut self.cap, Cap::None) {
            Cap::Record { from, unit, at } => Some((from, unit, at)),
            _ => None,
        }
    }

    /// The key being collected ends before `end` of `chunk`: its bytes are all in `key`.
    pub(super) fn end_key(&mut self, chunk: &[u8], end: usize) {
        if let Cap::Key { from } = self.cap {
            self.key.extend_from_slice(&chunk[from..end]);
        }
        self.cap = Cap::None;
    }

    /// The field value being collected ends before `end` of `chunk`: whether one was, its
    /// bytes then all in `scratch`.
    pub(super) fn end_scratch(&mut self, chunk: &[u8], end: usize) -> bool {
        let Cap::Scratch { from } = self.cap else {
            return false;
        };
        self.scratch.extend_from_slice(&chunk[from..end]);
        self.cap = Cap::None;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{Cap, Carry};
    use crate::load::split::cut::{CutBatch, Pos};

    const AT: Pos = Pos {
        offset: 5,
        line: 1,
        column: 6,
    };

    /// A record cut by two chunk ends is whole in the batch, from where its first bytes went,
    /// with what the batch held before it left alone.
    #[test]
    fn a_record_crossing_chunks_is_whole_in_the_batch() {
        let mut batch = CutBatch::default();
        batch.buf.extend_from_slice(b"[prev]");
        let mut carry = Carry::new();
        carry.record(3, AT);
        carry.flush(b"xx {\"a\"", &mut batch);
        carry.flush(b":[1,", &mut batch);
        let Some((from, unit, at)) = carry.take_record() else {
            panic!("the record was dropped");
        };
        assert_eq!((from, unit, at), (0, 6, AT));
        let start = batch.end_record(unit, &b"2]}, next"[..3]);
        assert_eq!(&batch.buf[start..], b"{\"a\":[1,2]}");
        assert!(matches!(carry.cap, Cap::None));
        assert!(carry.take_record().is_none());
    }

    #[test]
    fn keys_and_field_values_collect_across_chunks() {
        let mut batch = CutBatch::default();
        let mut carry = Carry::new();
        carry.cap = Cap::Key { from: 1 };
        carry.flush(b",\"for", &mut batch);
        carry.end_key(b"mat\": 1", 4);
        assert_eq!(carry.key, b"\"format\"");
        carry.cap = Cap::Scratch { from: 2 };
        carry.flush(b": \"repo", &mut batch);
        assert!(carry.end_scratch(b"probe\",", 6));
        assert_eq!(carry.scratch, b"\"repoprobe\"");
        assert!(!carry.end_scratch(b"x", 1));
        assert!(
            batch.buf.is_empty(),
            "a key or field never goes into the batch"
        );
    }
}
