//! Cuts a file into records as its bytes arrive, chunk by chunk, without ever holding the whole
//! file: JSONL at its newlines, a JSON array at its top-level commas, a results bundle (or a file
//! of reported tables) at the commas of its record arrays. It reads only the structure —
//! strings, brackets, commas, colons — so it is cheap and never recurses; each record's text is
//! parsed afterwards on its own (`Cx`, possibly on another thread).
//!
//! What it cannot cut it keeps and hands over whole (`What::Whole`): a file that is one object
//! (a single record), or an object whose `format` is not known before its end (a bundle whose
//! arrays come before its `format` key). Errors in the structure (a missing comma, a bracket
//! that closes the wrong thing, the end of the file inside a record, absurd nesting) make the
//! rest of the file unusable, as a syntax error did when files were parsed whole, located where
//! the JSON parser finds the damage; an error inside one record's text costs only that record.
//!
//! It must not parse records or know what they hold beyond their container's key.
//!
//! Its parts, each with its own tests: [`shape`] (the mode a file's first bytes call for),
//! [`bytes`] (the byte searches of the hot loop), [`grammar`] (which separator may come when),
//! [`structure`] (the scan of strings, brackets and separators), [`records`] (where a record is
//! cut: JSONL lines, array elements, a file kept whole), [`container`] (a bundle's keys, its
//! format and version), [`problems`] (how a broken file is reported), and the state carried from
//! one chunk to the next: [`cursor`] (lines and columns, the top-level value's lines) and
//! [`carry`] (bytes being collected). This file holds the state and the chunk-by-chunk driver
//! that moves between the modes.

mod bytes;
mod carry;
mod container;
mod cursor;
mod cut;
mod grammar;
mod problems;
mod records;
mod shape;
#[cfg(test)]
mod sink;
mod structure;

pub(super) use cut::{CutBatch, Output, What};

use crate::issue::{IssueKind, Place, Severity};
use carry::{Cap, Carry};
use container::Fields;
use cursor::{Cursor, TopLines};
use grammar::{Fatal, Phase};
use shape::{BOM, Mode, decide};

/// Nesting deeper than this ends a cut file. The splitter never recurses, and the parse of each
/// record reports nesting deeper than 128 levels (docs/format.md#loading-rules) as that record's problem, as a whole
/// file's parse did; this bound only keeps the splitter's own stack of brackets small.
const MAX_DEPTH: usize = 1 << 20;

/// The splitter of one file.
pub(super) struct Splitter {
    file: usize,
    mode: Mode,
    shape: &'static str,
    /// Bytes fed so far.
    fed: u64,
    /// The file's bytes while they may have to be read again or whole (`Mode::keeps_head`).
    head: Vec<u8>,
    cursor: Cursor,
    // The structure.
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// A number or literal at a watched level is being read.
    scalar: bool,
    records: Records,
    /// The container object's phase (level 1).
    top: Phase,
    carry: Carry,
    fields: Fields,
    /// Set when the container's `format` is read while the object's shape was open.
    restart: Option<Mode>,
    top_lines: TopLines,
}

/// The array whose elements are records, and the records cut so far.
#[derive(Debug, Clone, Copy)]
struct Records {
    /// The level whose elements are records (1 in an array file, 2 inside a container's record
    /// array), 0 while there is none.
    level: usize,
    phase: Phase,
    /// Elements of the open record array so far, and records cut from the file.
    index: usize,
    count: usize,
}

/// What scanning a slice asks of its caller.
enum Flow {
    Continue,
    /// Scan the file's bytes kept so far again, from the start, in this mode.
    Restart(Mode),
    /// Go on from this index of the slice in the (changed) mode.
    Switch(usize),
}

impl Splitter {
    pub(super) fn new(file: usize) -> Self {
        Splitter {
            file,
            mode: Mode::Start,
            shape: "unknown",
            fed: 0,
            head: Vec::new(),
            cursor: Cursor::new(),
            stack: Vec::new(),
            in_string: false,
            escaped: false,
            scalar: false,
            records: Records {
                level: 0,
                phase: Phase::Open,
                index: 0,
                count: 0,
            },
            top: Phase::Open,
            carry: Carry::new(),
            fields: Fields::new(),
            restart: None,
            top_lines: TopLines::new(),
        }
    }

    /// `json`, `jsonl`, `bundle`, `reported` or `unknown` (the shape of a file handed over
    /// whole is decided by its parse).
    pub(super) fn shape(&self) -> &'static str {
        self.shape
    }

    pub(super) fn bytes(&self) -> u64 {
        self.fed
    }

    /// The container's `meta` (its first occurrence), once the file has ended.
    pub(super) fn take_meta(&mut self) -> Option<serde_json::Value> {
        self.fields.meta.take()
    }

    pub(super) fn feed(&mut self, chunk: &[u8], out: &mut impl Output) {
        self.fed += chunk.len() as u64;
        match self.mode {
            Mode::Done => return,
            Mode::Start => {
                self.head.extend_from_slice(chunk);
                match decide(&self.head) {
                    None => {}
                    Some(Mode::Done) => {
                        self.not_json(out);
                        self.head = Vec::new();
                        self.mode = Mode::Done;
                    }
                    Some(mode) => self.replay(Flow::Restart(mode), out),
                }
                return;
            }
            _ => {}
        }
        if self.mode.keeps_head() {
            self.head.extend_from_slice(chunk);
        }
        let flow = self.scan(chunk, out);
        self.replay(flow, out);
    }

    /// The end of the file: what is left is cut, handed over whole, or reported.
    pub(super) fn finish(&mut self, out: &mut impl Output) {
        match self.mode {
            Mode::Start => {
                let body = self.head.strip_prefix(BOM).unwrap_or(&self.head);
                if body.iter().all(u8::is_ascii_whitespace) {
                    self.issue(
                        Place::File,
                        IssueKind::EmptyFile,
                        "the file is empty: expected JSON or JSONL records".into(),
                        Severity::File,
                        out,
                    );
                } else {
                    self.not_json(out);
                }
            }
            Mode::Jsonl => self.end_line(&[], 0, out),
            Mode::Array | Mode::Container(_) => {
                if !self.top_lines.is_closed() {
                    let what = if self.in_string {
                        "a string"
                    } else if self.scalar {
                        "a value"
                    } else if self.stack.last() == Some(&b'{') {
                        "an object"
                    } else {
                        "a list"
                    };
                    // Where the JSON parser reports the end of a file: its last byte.
                    let mut pos = self.cursor.pos(0);
                    pos.column = pos.column.saturating_sub(1).max(1);
                    let message = format!("EOF while parsing {what}");
                    self.fatal(pos, IssueKind::CutShort, &message, &[], out);
                }
                self.end_container(out);
            }
            Mode::Head | Mode::Whole => self.hand_whole(out),
            Mode::Done => {}
        }
        self.mode = Mode::Done;
    }

    /// Follows restarts: the kept bytes scanned again from the start in the new mode.
    fn replay(&mut self, mut flow: Flow, out: &mut impl Output) {
        while let Flow::Restart(mode) = flow {
            let head = std::mem::take(&mut self.head);
            self.reset(mode);
            let bom = if head.starts_with(BOM) { BOM.len() } else { 0 };
            self.cursor = Cursor::at_start(bom as u64);
            flow = self.scan(&head[bom..], out);
            self.head = head;
        }
        if !self.mode.keeps_head() {
            self.head = Vec::new();
        }
    }

    fn reset(&mut self, mode: Mode) {
        let (file, fed) = (self.file, self.fed);
        *self = Splitter::new(file);
        self.fed = fed;
        self.mode = mode;
        self.shape = mode.shape();
    }

    fn scan(&mut self, chunk: &[u8], out: &mut impl Output) -> Flow {
        let mut i = 0;
        let flow = loop {
            let r = match self.mode {
                Mode::Jsonl => {
                    self.scan_lines(chunk, i, out);
                    Flow::Continue
                }
                Mode::Array | Mode::Head | Mode::Container(_) => {
                    match self.scan_structure(chunk, i, out) {
                        Ok(flow) => flow,
                        Err(Fatal(..)) if self.mode == Mode::Head => {
                            // Parsed whole, the error is told as the JSON parser tells it.
                            self.mode = Mode::Whole;
                            self.carry.cap = Cap::None;
                            Flow::Continue
                        }
                        Err(Fatal(at, kind, message)) => {
                            let tail = match self.carry.cap {
                                Cap::Record { from, .. } => &chunk[from..(at + 1).min(chunk.len())],
                                _ => &[],
                            };
                            let pos = self.cursor.pos(at);
                            self.fatal(pos, kind, &message, tail, out);
                            Flow::Continue
                        }
                    }
                }
                Mode::Start | Mode::Whole | Mode::Done => Flow::Continue,
            };
            match r {
                Flow::Switch(at) => i = at,
                other => break other,
            }
        };
        if let Flow::Continue = flow {
            self.carry.flush(chunk, out.batch());
            self.cursor.advance(chunk.len());
        }
        flow
    }
}

#[cfg(test)]
mod tests {
    use super::sink::cut_every_way;

    /// An object's `format` read after its record arrays makes its kept bytes scanned again as
    /// the container: the records come out as if the format had come first.
    #[test]
    fn a_format_after_the_arrays_restarts_the_scan() {
        let late = cut_every_way(
            b"{\"answers\":[{\"a\":1}],\"format\":\"repoprobe-results\",\"version\":1}",
        );
        assert_eq!(
            late,
            (
                "bundle",
                vec!["record Index(Some(\"answers\"), 0) @1:13 {\"a\":1}".to_string()]
            )
        );
    }

    /// A BOM is not part of the first line's columns, and nothing is cut twice when the kept
    /// bytes are scanned again.
    #[test]
    fn a_bom_before_a_container_is_skipped_when_scanned_again() {
        let (shape, units) = cut_every_way(
            b"\xEF\xBB\xBF{\"answers\":[{\"a\":1}],\n\"format\":\"repoprobe-results\"}",
        );
        assert_eq!(shape, "bundle");
        assert_eq!(
            units,
            ["record Index(Some(\"answers\"), 0) @1:13 {\"a\":1}"]
        );
    }

    /// After a fatal problem nothing more is read, however much more is fed.
    #[test]
    fn nothing_is_read_after_a_fatal_problem() {
        let (_, units) = cut_every_way(b"[{\"a\":1},,{\"b\":2},{\"c\":3}]");
        assert_eq!(units.len(), 2, "{units:?}");
        assert!(units[1].starts_with("issue fatal"), "{units:?}");
    }

    /// The splitter's own throughput on the 72.9 MB synth bundle of benches/README.md, cut in
    /// 1 MiB chunks into 256 KiB batches that are dropped when full (no parse): what the reading
    /// thread of the CLI and the site's worker spend on cutting. A timing, so run on demand:
    /// `cargo test --release -p repoprobe-core --lib split_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "a timing: run on demand, in release"]
    fn split_throughput() {
        use super::{CutBatch, Output, Splitter};
        use crate::synth::{SynthOptions, generate};
        struct Drain(CutBatch, usize);
        impl Output for Drain {
            fn batch(&mut self) -> &mut CutBatch {
                &mut self.0
            }
            fn unit_done(&mut self) {
                if self.0.buf.len() >= 256 << 10 {
                    self.1 += self.0.units.len();
                    self.0.buf.clear();
                    self.0.units.clear();
                }
            }
        }
        let options = SynthOptions {
            models: 20,
            questions: 500,
            runs: 5,
            seed: 1,
        };
        let bytes = serde_json::to_vec(&generate(options)).expect("a bundle serializes");
        let mut times = Vec::new();
        let mut units = 0;
        for _ in 0..21 {
            let start = std::time::Instant::now();
            let mut out = Drain(CutBatch::with_capacity(256 << 10), 0);
            let mut splitter = Splitter::new(0);
            for chunk in bytes.chunks(1 << 20) {
                splitter.feed(chunk, &mut out);
            }
            splitter.finish(&mut out);
            times.push(start.elapsed().as_secs_f64());
            units = out.1 + out.0.units.len();
        }
        times.sort_by(f64::total_cmp);
        let (best, median) = (times[0], times[times.len() / 2]);
        let mb = bytes.len() as f64 / 1e6;
        eprintln!(
            "{} bytes, {units} units: best {:.2} ms ({:.0} MB/s), median {:.2} ms ({:.0} MB/s)",
            bytes.len(),
            best * 1e3,
            mb / best,
            median * 1e3,
            mb / median
        );
        assert!(units > 50_000, "every record cut: {units}");
    }
}
