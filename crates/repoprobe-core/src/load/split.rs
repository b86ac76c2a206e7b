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

use super::record::{Location, RecordKind};
use super::visitors::CONTAINER_ARRAYS;
use super::{BUNDLE_FORMAT, REPORTED_FORMAT, describe_byte, line_col};
use crate::issue::{Issue, IssueKind, Place, RecordAt, Severity};
use std::ops::Range;

/// Nesting deeper than this ends a cut file. The splitter never recurses, and the parse of each
/// record reports nesting deeper than 128 levels (docs/format.md#loading-rules) as that record's problem, as a whole
/// file's parse did; this bound only keeps the splitter's own stack of brackets small.
const MAX_DEPTH: usize = 1 << 20;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Units cut from one or more files, their bytes side by side: what one parse takes, on this
/// thread or another.
#[derive(Debug, Default)]
pub(super) struct CutBatch {
    pub(super) buf: Vec<u8>,
    pub(super) units: Vec<Unit>,
}

impl CutBatch {
    /// A batch that holds `bytes` of records without growing (a record that ends past them
    /// still fits: the buffer grows for it).
    pub(super) fn with_capacity(bytes: usize) -> Self {
        CutBatch {
            // Room for the record that crosses the mark.
            buf: Vec::with_capacity(bytes + bytes / 4),
            units: Vec::new(),
        }
    }

    /// Appends a record's last bytes; its first ones went in at `unit` when it crossed a chunk
    /// (`usize::MAX`: it lies within this chunk). Where the record starts in `buf`.
    fn end_record(&mut self, unit: usize, tail: &[u8]) -> usize {
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
pub(super) struct Unit {
    /// The file's number in load order.
    pub(super) file: usize,
    /// Its bytes in [`CutBatch::buf`] (empty for issues).
    pub(super) range: Range<usize>,
    /// Where those bytes start in the file.
    pub(super) at: Pos,
    pub(super) what: What,
}

/// A place in a file: byte offset, and line and column (1-based) as messages give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pos {
    pub(super) offset: u64,
    pub(super) line: usize,
    pub(super) column: usize,
}

#[derive(Debug)]
pub(super) enum What {
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
pub(super) trait Output {
    fn batch(&mut self) -> &mut CutBatch;
    /// Called after each unit: the only moment a batch may be handed on (no unit is half in it).
    fn unit_done(&mut self);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
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
enum Container {
    Bundle,
    Reported,
}

impl Mode {
    fn keeps_head(self) -> bool {
        matches!(self, Mode::Start | Mode::Head | Mode::Whole)
    }
}

/// Where the scan stands in an array (of records) or in the container object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Just after `[` or `{`: a value (key) or the close.
    Open,
    /// After a comma: a value (key).
    Next,
    /// Inside a key (objects).
    Key,
    /// After a key: `:`.
    Colon,
    /// After `:`: a value.
    Value,
    /// Inside a value.
    In,
    /// After a value: a comma or the close.
    After,
}

/// What the value of the container's current key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Skip,
    Format,
    Version,
    Meta,
    Records(&'static str, RecordKind),
}

/// Bytes being collected, and from where in the current chunk.
#[derive(Debug, Clone, Copy)]
enum Cap {
    None,
    /// A record (or JSONL line) into the batch, from `unit` in its buffer.
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

/// The splitter of one file.
pub(super) struct Splitter {
    file: usize,
    mode: Mode,
    shape: &'static str,
    /// Bytes fed so far.
    fed: u64,
    /// The file's bytes while they may have to be read again or whole (`Mode::keeps_head`).
    head: Vec<u8>,
    /// Offset of the first byte of the slice being scanned; line of the next byte, and the
    /// offset where that line starts.
    base: u64,
    line: usize,
    line_start: u64,
    // The structure.
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// A number or literal at a watched level is being read.
    scalar: bool,
    /// The level whose elements are records (1 in an array file, 2 inside a container's record
    /// array), 0 while there is none.
    records_level: usize,
    rec: Phase,
    /// The container object's phase (level 1).
    top: Phase,
    role: Role,
    key: Vec<u8>,
    scratch: Vec<u8>,
    seen_keys: Vec<(String, usize)>,
    cap: Cap,
    /// Set when the container's `format` is read while the object's shape was open.
    restart: Option<Mode>,
    /// Elements of the open record array so far, and records cut from the file.
    index: usize,
    count: usize,
    /// Line of the top-level value's first byte; the line it closed on; whether a newline came
    /// after it.
    open_line: usize,
    close_line: Option<usize>,
    newline_after: bool,
    version: Option<serde_json::Value>,
    meta: Option<serde_json::Value>,
    /// The container's version was checked.
    checked: bool,
}

/// What scanning a slice asks of its caller.
enum Flow {
    Continue,
    /// Scan the file's bytes kept so far again, from the start, in this mode.
    Restart(Mode),
    /// Go on from this index of the slice in the (changed) mode.
    Switch(usize),
}

/// A problem in the structure, at an index of the slice being scanned, of a kind.
struct Fatal(usize, IssueKind, String);

impl Splitter {
    pub(super) fn new(file: usize) -> Self {
        Splitter {
            file,
            mode: Mode::Start,
            shape: "unknown",
            fed: 0,
            head: Vec::new(),
            base: 0,
            line: 1,
            line_start: 0,
            stack: Vec::new(),
            in_string: false,
            escaped: false,
            scalar: false,
            records_level: 0,
            rec: Phase::Open,
            top: Phase::Open,
            role: Role::Skip,
            key: Vec::new(),
            scratch: Vec::new(),
            seen_keys: Vec::new(),
            cap: Cap::None,
            restart: None,
            index: 0,
            count: 0,
            open_line: 1,
            close_line: None,
            newline_after: false,
            version: None,
            meta: None,
            checked: false,
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
        self.meta.take()
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
                if self.close_line.is_none() {
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
                    let mut pos = self.pos(0);
                    pos.column = pos.column.saturating_sub(1).max(1);
                    let message = format!("EOF while parsing {what}");
                    self.fatal(pos, IssueKind::CutShort, &message, &[], out);
                }
                self.end_container(out);
            }
            Mode::Head | Mode::Whole => {
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
            self.base = bom as u64;
            self.line_start = bom as u64;
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
        self.shape = match mode {
            Mode::Jsonl => "jsonl",
            Mode::Array => "json",
            Mode::Container(Container::Bundle) => "bundle",
            Mode::Container(Container::Reported) => "reported",
            _ => "unknown",
        };
    }

    fn pos(&self, i: usize) -> Pos {
        let offset = self.base + i as u64;
        Pos {
            offset,
            line: self.line,
            column: (offset - self.line_start) as usize + 1,
        }
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
                            self.cap = Cap::None;
                            Flow::Continue
                        }
                        Err(Fatal(at, kind, message)) => {
                            let tail = match self.cap {
                                Cap::Record { from, .. } => &chunk[from..(at + 1).min(chunk.len())],
                                _ => &[],
                            };
                            let pos = self.pos(at);
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
            self.flush_cap(chunk, out);
            self.base += chunk.len() as u64;
        }
        flow
    }

    /// At the end of a slice: what is being collected keeps its bytes so far.
    fn flush_cap(&mut self, chunk: &[u8], out: &mut impl Output) {
        match &mut self.cap {
            Cap::None => {}
            Cap::Record { from, unit, .. } => {
                let buf = &mut out.batch().buf;
                if *unit == usize::MAX {
                    *unit = buf.len();
                }
                buf.extend_from_slice(&chunk[*from..]);
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

    /// JSONL: every non-blank line is a record.
    fn scan_lines(&mut self, chunk: &[u8], mut i: usize, out: &mut impl Output) {
        while i < chunk.len() {
            if let Cap::None = self.cap {
                self.cap = Cap::Record {
                    from: i,
                    unit: usize::MAX,
                    at: self.pos(i),
                };
            }
            let Some(k) = memchr::memchr(b'\n', &chunk[i..]) else {
                return;
            };
            let nl = i + k;
            self.end_line(chunk, nl, out);
            self.line += 1;
            self.line_start = self.base + nl as u64 + 1;
            i = nl + 1;
        }
    }

    /// The JSONL line being read ends at `end` of `chunk`.
    fn end_line(&mut self, chunk: &[u8], end: usize, out: &mut impl Output) {
        let Cap::Record { from, unit, at } = std::mem::replace(&mut self.cap, Cap::None) else {
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
                before: self.count,
            },
        });
        self.count += 1;
        out.unit_done();
    }

    /// Arrays and objects: strings, brackets, commas and colons, and the levels that matter.
    fn scan_structure(
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
            if depth == 0 && self.close_line.is_some() {
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
    /// record array (`records_level`) opened when it is one.
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
            self.open_line = self.line;
            if self.mode == Mode::Array {
                self.records_level = 1;
                self.rec = Phase::Open;
            } else {
                self.top = Phase::Open;
            }
        } else if depth == 1
            && self.is_object()
            && self.top == Phase::In
            && matches!(self.role, Role::Records(..))
        {
            self.records_level = 2;
            self.rec = Phase::Open;
            self.index = 0;
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
            close_allowed(self.rec, i)?;
        } else if depth == 1 && self.is_object() {
            close_allowed(self.top, i)?;
        }
        self.stack.pop();
        let depth = depth - 1;
        if depth == 1 && self.records_level == 2 {
            // The container's record array ended.
            self.records_level = 0;
        }
        if depth == 0 {
            self.close_line = Some(self.line);
            self.records_level = 0;
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
                comma_allowed(self.rec, i, true)?;
                self.rec = Phase::Next;
            } else if depth == 1 && self.is_object() {
                comma_allowed(self.top, i, false)?;
                self.top = Phase::Next;
            }
        } else if depth == 1 && self.is_object() {
            if self.top != Phase::Colon {
                return Err(Fatal(i, IssueKind::BrokenJson, "unexpected `:`".into()));
            }
            self.top = Phase::Value;
        }
        Ok(())
    }

    fn newline(&mut self, i: usize) {
        self.line += 1;
        self.line_start = self.base + i as u64 + 1;
        if self.stack.is_empty() && self.close_line.is_some() {
            self.newline_after = true;
        }
    }

    fn is_object(&self) -> bool {
        matches!(self.mode, Mode::Head | Mode::Container(_))
    }

    fn at_records(&self, depth: usize) -> bool {
        self.records_level != 0 && depth == self.records_level
    }

    /// The deepest level whose values the splitter watches.
    fn watched(&self) -> usize {
        self.records_level.max(1)
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
        let jsonl =
            self.is_object() && self.newline_after && self.close_line == Some(self.open_line);
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
            match self.rec {
                Phase::Open | Phase::Next => {
                    self.rec = Phase::In;
                    self.cap = Cap::Record {
                        from: i,
                        unit: usize::MAX,
                        at: self.pos(i),
                    };
                }
                _ => return Err(Fatal(i, IssueKind::BrokenJson, expected_after(b']'))),
            }
        } else if depth == 1 && self.is_object() {
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
                    self.key.clear();
                    self.cap = Cap::Key { from: i };
                }
                Phase::Value => {
                    self.top = Phase::In;
                    match self.role {
                        Role::Format | Role::Version | Role::Meta => {
                            self.scratch.clear();
                            self.cap = Cap::Scratch { from: i };
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
        if depth == 1 && self.is_object() && self.top == Phase::Key {
            if let Cap::Key { from } = self.cap {
                self.key.extend_from_slice(&chunk[from..end]);
            }
            self.cap = Cap::None;
            self.top = Phase::Colon;
            self.role = self.key_role(out);
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
        if (self.at_records(depth) && self.rec == Phase::In)
            || (depth == 1 && self.is_object() && self.top == Phase::In)
        {
            self.value_ends(depth, chunk, end, out);
        }
        Ok(())
    }

    /// The value at `depth` ended just before `end` of `chunk`.
    fn value_ends(&mut self, depth: usize, chunk: &[u8], end: usize, out: &mut impl Output) {
        if self.at_records(depth) {
            self.rec = Phase::After;
            let Cap::Record { from, unit, at } = std::mem::replace(&mut self.cap, Cap::None) else {
                return;
            };
            let (location, expected) = match (self.mode, self.role) {
                (Mode::Container(_), Role::Records(key, kind)) => {
                    (Location::Index(Some(key), self.index), Some(kind))
                }
                _ => (Location::Index(None, self.index), None),
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
                    before: self.count,
                },
            });
            self.index += 1;
            self.count += 1;
            out.unit_done();
        } else if depth == 1 && self.is_object() {
            self.top = Phase::After;
            if let Cap::Scratch { from } = self.cap {
                self.scratch.extend_from_slice(&chunk[from..end]);
                self.cap = Cap::None;
                self.field_read(out);
            }
        }
    }

    /// A container field other than a record array was read into `scratch`.
    fn field_read(&mut self, out: &mut impl Output) {
        match self.role {
            Role::Format => {
                if self.mode == Mode::Head {
                    match serde_json::from_slice::<Option<String>>(&self.scratch) {
                        Ok(Some(f)) if f == BUNDLE_FORMAT => {
                            self.restart = Some(Mode::Container(Container::Bundle));
                        }
                        Ok(Some(f)) if f == REPORTED_FORMAT => {
                            self.restart = Some(Mode::Container(Container::Reported));
                        }
                        _ => {}
                    }
                }
            }
            Role::Version | Role::Meta => {
                let (name, slot) = match self.role {
                    Role::Version => ("version", &mut self.version),
                    _ => ("meta", &mut self.meta),
                };
                match serde_json::from_slice::<serde_json::Value>(&self.scratch) {
                    Ok(v) => *slot = Some(v),
                    Err(e) => {
                        let message =
                            format!("invalid JSON: {}", super::visitors::strip_position(&e));
                        let kind = super::visitors::json_error_kind(&e, &self.scratch);
                        let place = Place::inside(RecordAt::Root, name);
                        self.issue(place, kind, message, Severity::Record, out);
                    }
                }
            }
            Role::Skip | Role::Records(..) => {}
        }
        self.scratch = Vec::new();
    }

    /// The container key just read: what its value is for. A repeated key is reported and its
    /// value skipped (the first is kept).
    fn key_role(&mut self, out: &mut impl Output) -> Role {
        let key: String = serde_json::from_slice(&self.key).unwrap_or_default();
        let n = match self.seen_keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.seen_keys.push((key.clone(), 1));
                1
            }
        };
        if n > 1 {
            if let Mode::Container(_) = self.mode {
                self.issue(
                    Place::inside(RecordAt::Root, &key),
                    IssueKind::DuplicateKey,
                    format!("duplicate key `{key}` (occurrence {n}): the first is kept"),
                    Severity::Record,
                    out,
                );
            }
            return Role::Skip;
        }
        match (self.mode, key.as_str()) {
            (_, "format") => Role::Format,
            (Mode::Container(_), "version") => Role::Version,
            (Mode::Container(_), "meta") => Role::Meta,
            (Mode::Container(c), k) => {
                let kind = match c {
                    Container::Bundle => RecordKind::from_bundle_key(k),
                    Container::Reported => (k == "values").then_some(RecordKind::Reported),
                };
                match (kind, CONTAINER_ARRAYS.iter().find(|a| **a == k)) {
                    (Some(kind), Some(name)) => Role::Records(name, kind),
                    _ => Role::Skip,
                }
            }
            _ => Role::Skip,
        }
    }

    /// The container's version is checked once its object has ended (or the file has): with a
    /// version this tool does not read, none of its records count.
    fn end_container(&mut self, out: &mut impl Output) {
        if self.checked || !matches!(self.mode, Mode::Container(_)) {
            return;
        }
        self.checked = true;
        if let Some(v) = &self.version
            && v.as_u64() != Some(u64::from(crate::FORMAT_VERSION))
        {
            let issue = Issue::new(
                String::new(),
                Place::inside(RecordAt::Root, "version"),
                IssueKind::UnsupportedVersion,
                format!(
                    "unsupported version {v}: this tool reads version {}",
                    crate::FORMAT_VERSION
                ),
                Severity::File,
            );
            self.push(What::Void(issue), out);
        }
    }

    /// A problem with the rest of the file at `pos`: nothing after it is read. `tail`: the
    /// bytes of the record being read that are not in the batch yet.
    fn fatal(
        &mut self,
        mut pos: Pos,
        mut kind: IssueKind,
        message: &str,
        tail: &[u8],
        out: &mut impl Output,
    ) {
        let mut message = message.to_string();
        if let Cap::Record { unit, at, .. } = self.cap {
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
        self.cap = Cap::None;
        let kept = if self.count > 0 {
            format!(
                "; the {} record(s) before it were read, the rest of the file was not",
                self.count
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
        issue.read_before = self.count;
        self.push(What::Issue { issue, fatal: true }, out);
        self.end_container(out);
        self.mode = Mode::Done;
    }

    /// The file's first non-whitespace byte is not the start of JSON.
    fn not_json(&mut self, out: &mut impl Output) {
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

    fn issue(
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

    fn push(&mut self, what: What, out: &mut impl Output) {
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

/// A closing bracket of the watched array or object in `phase`.
fn close_allowed(phase: Phase, i: usize) -> Result<(), Fatal> {
    match phase {
        Phase::Open | Phase::After => Ok(()),
        Phase::Next => Err(Fatal(i, IssueKind::BrokenJson, "trailing comma".into())),
        Phase::Colon => Err(Fatal(i, IssueKind::BrokenJson, "expected `:`".into())),
        Phase::Value | Phase::In => Err(Fatal(i, IssueKind::BrokenJson, "expected value".into())),
        Phase::Key => Err(Fatal(
            i,
            IssueKind::BrokenJson,
            "key must be a string".into(),
        )),
    }
}

/// A comma in the watched array (`array`) or object in `phase`.
fn comma_allowed(phase: Phase, i: usize, array: bool) -> Result<(), Fatal> {
    match phase {
        Phase::After => Ok(()),
        Phase::Colon => Err(Fatal(i, IssueKind::BrokenJson, "expected `:`".into())),
        _ if array => Err(Fatal(i, IssueKind::BrokenJson, "expected value".into())),
        Phase::Value => Err(Fatal(i, IssueKind::BrokenJson, "expected value".into())),
        _ => Err(Fatal(
            i,
            IssueKind::BrokenJson,
            "key must be a string".into(),
        )),
    }
}

/// The first syntax error in `bytes` (a record's, from `at` in its file), as the JSON parser
/// words it, its kind, and where it is in the file; `None` when the bytes are fine as far as
/// they go.
fn syntax_error(bytes: &[u8], at: Pos) -> Option<(Pos, IssueKind, String)> {
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
    let message =
        super::visitors::strip_position(&e) + super::visitors::not_a_json_number(bytes, &e);
    Some((
        Pos {
            offset: at.offset,
            line,
            column,
        },
        super::visitors::json_error_kind(&e, bytes),
        message,
    ))
}

/// Where the scan of a string stops: its first `"`, `\\` or newline.
///
/// Most strings of a results file are short (keys, ids, model names): on x86-64 their first 64
/// bytes are looked at with memchr's SSE2 searcher (SSE2 is part of every x86-64, so it is
/// always there), which the compiler inlines here, without the generic `memchr3`'s call through
/// a function pointer, which costs more than such a string's scan; longer texts go on with
/// `memchr3`, which picks the widest vectors the machine has. The same answer either way.
#[inline]
fn string_stop(s: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(short) = memchr::arch::x86_64::sse2::memchr::Three::new(b'"', b'\\', b'\n') {
        let head = &s[..s.len().min(SHORT_STRING)];
        if let Some(k) = short.find(head) {
            return Some(k);
        }
        if s.len() <= SHORT_STRING {
            return None;
        }
        return memchr::memchr3(b'"', b'\\', b'\n', &s[SHORT_STRING..]).map(|k| SHORT_STRING + k);
    }
    memchr::memchr3(b'"', b'\\', b'\n', s)
}

/// The bytes of a string scanned inline before the generic search takes over.
#[cfg(target_arch = "x86_64")]
const SHORT_STRING: usize = 64;

/// Bytes that matter inside a record: strings, brackets and newlines.
static STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t[b'\n' as usize] = true;
    t
};

fn expected_after(close: u8) -> String {
    format!("expected `,` or `{}`", close as char)
}

/// The mode a file's first bytes call for, once its first non-whitespace byte is there
/// (`Mode::Done`: it is not JSON).
fn decide(head: &[u8]) -> Option<Mode> {
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
    /// The inline scan of a string's first bytes finds what memchr3 finds, wherever the stop is
    /// (in the first 64 bytes, past them, in a short tail, nowhere).
    #[test]
    fn string_stop_finds_what_memchr_finds() {
        for len in 0..200 {
            for stop in [None, Some(b'"'), Some(b'\\'), Some(b'\n')] {
                for at in [0, 1, 15, 16, 17, 31, 47, 63, 64, 65, 80, 150, 199] {
                    let mut s: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                    if let (Some(b), Some(x)) = (stop, s.get_mut(at)) {
                        *x = b;
                    }
                    assert_eq!(
                        super::string_stop(&s),
                        memchr::memchr3(b'"', b'\\', b'\n', &s),
                        "len {len}, {stop:?} at {at}"
                    );
                }
            }
        }
    }
}
