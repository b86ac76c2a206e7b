//! Where in its file the slice being scanned lies: the offset of its first byte, and the line
//! and where that line began, so that any index of the slice becomes a line and a column as
//! messages give them. It carries over from chunk to chunk.

use super::cut::Pos;

#[derive(Debug, Clone, Copy)]
pub(super) struct Cursor {
    /// Offset of the first byte of the slice being scanned.
    base: u64,
    /// Line of the next byte, and the offset where that line starts.
    line: usize,
    line_start: u64,
}

impl Cursor {
    pub(super) fn new() -> Self {
        Cursor {
            base: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// A scan from `offset` of the file's first line (after a BOM).
    pub(super) fn at_start(offset: u64) -> Self {
        Cursor {
            base: offset,
            line: 1,
            line_start: offset,
        }
    }

    /// The line being read.
    pub(super) fn line(&self) -> usize {
        self.line
    }

    /// Index `i` of the slice as a place in the file.
    #[inline]
    pub(super) fn pos(&self, i: usize) -> Pos {
        let offset = self.base + i as u64;
        Pos {
            offset,
            line: self.line,
            column: (offset - self.line_start) as usize + 1,
        }
    }

    /// A newline at index `i` of the slice: the next line starts after it.
    #[inline]
    pub(super) fn newline(&mut self, i: usize) {
        self.line += 1;
        self.line_start = self.base + i as u64 + 1;
    }

    /// The slice of `len` bytes is done: the next one follows it in the file.
    pub(super) fn advance(&mut self, len: usize) {
        self.base += len as u64;
    }
}

/// The lines of the file's top-level value: where it opened and closed, and whether a newline
/// came after it, which tell a one-line first object of a JSONL file from a one-object file.
#[derive(Debug, Clone, Copy)]
pub(super) struct TopLines {
    open: usize,
    close: Option<usize>,
    newline_after: bool,
}

impl TopLines {
    pub(super) fn new() -> Self {
        TopLines {
            open: 1,
            close: None,
            newline_after: false,
        }
    }

    pub(super) fn opened(&mut self, line: usize) {
        self.open = line;
    }

    pub(super) fn closed(&mut self, line: usize) {
        self.close = Some(line);
    }

    /// The top-level value has ended.
    pub(super) fn is_closed(&self) -> bool {
        self.close.is_some()
    }

    /// A newline outside every value: after the top-level value once it has ended.
    pub(super) fn newline(&mut self) {
        if self.is_closed() {
            self.newline_after = true;
        }
    }

    /// The value opened and closed on one line, and a newline followed it.
    pub(super) fn one_line_then_more(&self) -> bool {
        self.newline_after && self.close == Some(self.open)
    }
}

#[cfg(test)]
mod tests {
    use super::{Cursor, TopLines};

    /// Lines and columns follow newlines across slices: a line begun in one slice goes on in
    /// the next, its columns counted from its start.
    #[test]
    fn columns_count_from_the_line_start_across_slices() {
        let mut c = Cursor::at_start(3);
        assert_eq!((c.pos(0).offset, c.pos(0).line, c.pos(0).column), (3, 1, 1));
        c.newline(4);
        assert_eq!(c.line(), 2);
        assert_eq!((c.pos(5).line, c.pos(5).column), (2, 1));
        c.advance(10);
        let p = c.pos(2);
        assert_eq!((p.offset, p.line, p.column), (15, 2, 8));
        assert_eq!(Cursor::new().pos(0).column, 1);
    }

    /// Only a value that opened and closed on one line, then a newline, reads as JSONL's first
    /// line; a newline before it closed does not count.
    #[test]
    fn a_one_line_value_then_a_newline_is_told_apart() {
        let mut one = TopLines::new();
        one.opened(1);
        one.newline();
        assert!(!one.is_closed() && !one.one_line_then_more());
        one.closed(1);
        assert!(one.is_closed() && !one.one_line_then_more());
        one.newline();
        assert!(one.one_line_then_more());
        let mut many = TopLines::new();
        many.opened(2);
        many.closed(4);
        many.newline();
        assert!(!many.one_line_then_more());
    }
}
