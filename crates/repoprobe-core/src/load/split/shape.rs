//! The shape of a file, told from its first bytes (JSONL, a JSON array, or an object whose
//! `format` decides), and what the splitter does in each: the modes it moves through.

/// A UTF-8 byte order mark, skipped before a file's first value.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Nothing but whitespace (and a BOM) seen yet.
    Start,
    Jsonl,
    /// A top-level JSON array: its elements are records.
    Array,
    /// A top-level object whose `format` is not known yet: kept whole while scanned.
    Head,
    /// A bundle or reported tables: the elements of its record arrays are records.
    Container(Container),
    /// Kept whole to the end, then parsed as one value.
    Whole,
    /// Nothing more is read (after a fatal problem).
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Container {
    Bundle,
    Reported,
}

impl Mode {
    /// The file's bytes are kept while in this mode: they may have to be scanned again from
    /// the start, or handed over whole.
    pub(super) fn keeps_head(self) -> bool {
        matches!(self, Mode::Start | Mode::Head | Mode::Whole)
    }

    /// The shape a file read in this mode is reported as (`unknown` until the mode says more).
    pub(super) fn shape(self) -> &'static str {
        match self {
            Mode::Jsonl => "jsonl",
            Mode::Array => "json",
            Mode::Container(Container::Bundle) => "bundle",
            Mode::Container(Container::Reported) => "reported",
            _ => "unknown",
        }
    }

    /// Values at the top level are an object's (its keys matter), not an array's.
    pub(super) fn is_object(self) -> bool {
        matches!(self, Mode::Head | Mode::Container(_))
    }
}

/// The mode a file's first bytes call for, once its first non-whitespace byte is there
/// (`Mode::Done`: it is not JSON).
pub(super) fn decide(head: &[u8]) -> Option<Mode> {
    if head.len() < BOM.len() && BOM.starts_with(head) {
        // Maybe a BOM, not all there yet.
        return None;
    }
    let body = head.strip_prefix(BOM).unwrap_or(head);
    let first = body.iter().find(|b| !b.is_ascii_whitespace())?;
    Some(match first {
        b'[' => Mode::Array,
        b'{' => Mode::Head,
        _ => Mode::Done,
    })
}

#[cfg(test)]
mod tests {
    use super::{Container, Mode, decide};

    #[test]
    fn the_first_non_blank_byte_decides() {
        assert_eq!(decide(b""), None);
        assert_eq!(decide(b" \n\t\r"), None);
        assert_eq!(decide(b"  [1]"), Some(Mode::Array));
        assert_eq!(decide(b"\n{\"a\":1}"), Some(Mode::Head));
        assert_eq!(decide(b"x"), Some(Mode::Done));
        assert_eq!(decide(b"  1"), Some(Mode::Done));
    }

    /// A BOM cut by a chunk's end waits for its last bytes; whole, it is skipped; a file whose
    /// first bytes only look like its start is not JSON.
    #[test]
    fn a_bom_is_waited_for_then_skipped() {
        assert_eq!(decide(b"\xEF"), None);
        assert_eq!(decide(b"\xEF\xBB"), None);
        assert_eq!(decide(b"\xEF\xBB\xBF"), None);
        assert_eq!(decide(b"\xEF\xBB\xBF ["), Some(Mode::Array));
        assert_eq!(decide(b"\xEF\xBB{"), Some(Mode::Done));
    }

    #[test]
    fn modes_name_their_shape_and_what_they_keep() {
        assert_eq!(Mode::Jsonl.shape(), "jsonl");
        assert_eq!(Mode::Array.shape(), "json");
        assert_eq!(Mode::Container(Container::Bundle).shape(), "bundle");
        assert_eq!(Mode::Container(Container::Reported).shape(), "reported");
        assert_eq!(Mode::Head.shape(), "unknown");
        let kept: Vec<Mode> = [
            Mode::Start,
            Mode::Jsonl,
            Mode::Array,
            Mode::Head,
            Mode::Whole,
        ]
        .into_iter()
        .filter(|m| m.keeps_head())
        .collect();
        assert_eq!(kept, [Mode::Start, Mode::Head, Mode::Whole]);
        assert!(Mode::Head.is_object() && Mode::Container(Container::Bundle).is_object());
        assert!(!Mode::Array.is_object() && !Mode::Jsonl.is_object());
    }
}
