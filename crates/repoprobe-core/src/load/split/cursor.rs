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

#[cfg(test)]
mod tests {
    use super::Cursor;

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
}
