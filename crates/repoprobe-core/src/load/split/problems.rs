//! How a broken file is told: a problem in the structure ends the file's reading, worded and
//! located as the JSON parser finds the damage (most often inside the record being read), with
//! how many records before it were read; other problems are issues beside the records.

use super::super::visitors::{json_error_kind, not_a_json_number, strip_position};
use super::super::{describe_byte, line_col};
use super::Splitter;
use super::carry::Cap;
use super::cut::{Output, Pos, Unit, What};
use super::shape::{BOM, Mode};
use crate::issue::{Issue, IssueKind, Place, Severity};

impl Splitter {
    /// A problem with the rest of the file at `pos`: nothing after it is read. `tail`: the
    /// bytes of the record being read that are not in the batch yet.
    pub(super) fn fatal(
        &mut self,
        mut pos: Pos,
        mut kind: IssueKind,
        message: &str,
        tail: &[u8],
        out: &mut impl Output,
    ) {
        let mut message = message.to_string();
        if let Cap::Record { unit, at, .. } = self.carry.cap {
            let buf = &mut out.batch().buf;
            let unit = if unit == usize::MAX { buf.len() } else { unit };
            // The structure is found broken here, but the damage is most often inside the record
            // being read (a quote lost turns strings inside out until a bracket does not
            // match): the JSON parser tells where, as when files were parsed whole.
            buf.extend_from_slice(tail);
            if let Some((p, k, m)) = syntax_error(&buf[unit..], at) {
                (pos, kind, message) = (p, k, m);
            }
            buf.truncate(unit);
        }
        self.carry.cap = Cap::None;
        let kept = if self.records.count > 0 {
            format!(
                "; the {} record(s) before it were read, the rest of the file was not",
                self.records.count
            )
        } else {
            "; the rest of the file was not read".to_string()
        };
        let mut issue = Issue::new(
            String::new(),
            Place::Position {
                line: pos.line,
                column: pos.column,
            },
            kind,
            format!("invalid JSON: {message}{kept}"),
            Severity::File,
        );
        issue.read_before = self.records.count;
        self.push(What::Issue { issue, fatal: true }, out);
        self.end_container(out);
        self.mode = Mode::Done;
    }

    /// The file's first non-whitespace byte is not the start of JSON.
    pub(super) fn not_json(&mut self, out: &mut impl Output) {
        let body = self.head.strip_prefix(BOM).unwrap_or(&self.head);
        let Some(first) = body.iter().position(|b| !b.is_ascii_whitespace()) else {
            return;
        };
        let (line, column) = line_col(body, first);
        self.issue(
            Place::Position { line, column },
            IssueKind::NotJson,
            format!(
                "not JSON: a RepoProbe file starts with `[`, `{{` or a JSON object per line, found {}",
                describe_byte(body[first])
            ),
            Severity::File,
            out,
        );
    }

    pub(super) fn issue(
        &mut self,
        location: Place,
        kind: IssueKind,
        message: String,
        severity: Severity,
        out: &mut impl Output,
    ) {
        let issue = Issue::new(String::new(), location, kind, message, severity);
        self.push(
            What::Issue {
                issue,
                fatal: false,
            },
            out,
        );
    }

    pub(super) fn push(&mut self, what: What, out: &mut impl Output) {
        let batch = out.batch();
        let at = batch.buf.len();
        batch.units.push(Unit {
            file: self.file,
            range: at..at,
            at: Pos {
                offset: 0,
                line: 0,
                column: 0,
            },
            what,
        });
    }
}

/// The first syntax error in `bytes` (a record's, from `at` in its file), as the JSON parser
/// words it, its kind, and where it is in the file; `None` when the bytes are fine as far as
/// they go.
pub(super) fn syntax_error(bytes: &[u8], at: Pos) -> Option<(Pos, IssueKind, String)> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let e = serde::de::IgnoredAny::deserialize(&mut de).err()?;
    if !e.is_syntax() {
        return None;
    }
    let (line, column) = match e.line() {
        1 => (at.line, at.column + e.column().max(1) - 1),
        l => (at.line + l - 1, e.column().max(1)),
    };
    let message = strip_position(&e) + not_a_json_number(bytes, &e);
    Some((
        Pos {
            offset: at.offset,
            line,
            column,
        },
        json_error_kind(&e, bytes),
        message,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::cut::Pos;
    use super::super::sink::cut_every_way;
    use super::syntax_error;
    use crate::issue::IssueKind;

    const AT: Pos = Pos {
        offset: 9,
        line: 3,
        column: 4,
    };

    /// A record's syntax error is placed in the file: on the record's first line its column
    /// counts from the record's, on a later line from that line's start.
    #[test]
    fn a_records_syntax_error_is_placed_in_its_file() {
        let (pos, kind, message) = syntax_error(b"{\"a\": tru}", AT).expect("broken");
        assert_eq!((pos.line, pos.column, kind), (3, 13, IssueKind::BrokenJson));
        assert_eq!(message, "expected ident");
        let (pos, ..) = syntax_error(b"{\"a\":\n tru}", AT).expect("broken");
        assert_eq!((pos.line, pos.column), (4, 5));
        assert_eq!(syntax_error(b"{\"a\": 1}", AT), None);
        assert_eq!(
            syntax_error(b"{\"a\": 1", AT),
            None,
            "cut short is not a syntax error"
        );
    }

    /// The end of the file inside the top-level value says what it was inside of.
    #[test]
    fn the_end_of_the_file_inside_a_value_is_cut_short() {
        let cases: [(&[u8], &str); 3] = [
            (b"[{\"a\":1},\n{\"b\":", "an object"),
            (b"[1, 2", "a value"),
            (b"[\"ab", "a string"),
        ];
        for (bytes, inside) in cases {
            let (_, units) = cut_every_way(bytes);
            let last = units.last().map(String::as_str).unwrap_or_default();
            assert!(
                last.starts_with(&format!(
                    "issue fatal CutShort invalid JSON: EOF while parsing {inside};"
                )),
                "{last}"
            );
        }
    }

    /// A file that is not JSON, or holds nothing, is one issue, not fatal to other files.
    #[test]
    fn not_json_and_empty_files_are_one_issue() {
        let (_, units) = cut_every_way(b"\xEF\xBB\xBF  x");
        assert_eq!(
            units,
            [
                "issue NotJson not JSON: a RepoProbe file starts with `[`, `{` or a JSON object per line, found `x`"
            ]
        );
        let (_, units) = cut_every_way(b"  \n ");
        assert_eq!(
            units,
            ["issue EmptyFile the file is empty: expected JSON or JSONL records"]
        );
    }
}
