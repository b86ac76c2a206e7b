//! The trajectories file (docs/format.md#trajectories-file): every run's ATIF trajectory, one
//! JSON line each — the answer's key first, then `trajectory` — so that a reader finds a run by
//! byte range without holding the others. Its index (`*.index.json`) lists each line's key,
//! offset and length; without one, [`Scanner`] makes it in one pass over the bytes, reading only
//! each line's head (the key), never a trajectory.

pub mod prefix;

use crate::model::trajectory::Trajectory;
use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// The `format` of an index.
pub const INDEX_FORMAT: &str = "repoprobe-trajectories-index";
/// The index format's version.
pub const INDEX_VERSION: u32 = 1;
/// How much of a line's start is kept to read its key: the key's three fields come first.
pub const HEAD_BYTES: usize = 64 << 10;

/// Which run a trajectory is of: the answer record's key.
pub type TrajectoryKey = crate::model::AnswerKey;

/// One line of the index: a run's key and where its line is in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct IndexEntry {
    #[serde(flatten)]
    pub key: TrajectoryKey,
    /// The line's first byte.
    pub offset: u64,
    /// The line's length, its newline left out.
    pub length: u64,
}

/// The index of a trajectories file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Index {
    pub format: String,
    pub version: u32,
    /// The trajectories file's size: an index of another version of the file is refused.
    pub bytes: u64,
    pub entries: Vec<IndexEntry>,
}

impl Index {
    pub fn new(bytes: u64, entries: Vec<IndexEntry>) -> Index {
        Index {
            format: INDEX_FORMAT.into(),
            version: INDEX_VERSION,
            bytes,
            entries,
        }
    }

    /// An index read from its JSON, checked against the file it indexes (`file_bytes` long):
    /// its format, its size, and every range inside the file.
    pub fn read(json: &[u8], file_bytes: u64) -> Result<Index, TrajectoryError> {
        let index: Index =
            serde_json::from_slice(json).map_err(|e| TrajectoryError::NotAnIndex(e.to_string()))?;
        if index.format != INDEX_FORMAT {
            return Err(TrajectoryError::OtherFormat(index.format));
        }
        if index.bytes != file_bytes {
            return Err(TrajectoryError::OtherFile {
                indexed: index.bytes,
                given: file_bytes,
            });
        }
        if let Some(e) = index.entries.iter().find(|e| {
            e.offset
                .checked_add(e.length)
                .is_none_or(|end| end > file_bytes)
        }) {
            return Err(TrajectoryError::PastTheEnd(e.key.clone()));
        }
        Ok(index)
    }

    /// The entry of `key` (the first, should a key be there twice).
    pub fn find(&self, key: &TrajectoryKey) -> Option<&IndexEntry> {
        self.entries.iter().find(|e| &e.key == key)
    }
}

/// Why a trajectories file or its index cannot be read as one. Serde: the site's worker sends it
/// to its page as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrajectoryError {
    #[error("not a trajectories index: {0}")]
    NotAnIndex(String),
    #[error("not a trajectories index: its format is {0:?}, not {INDEX_FORMAT:?}")]
    OtherFormat(String),
    #[error(
        "the index is of a file of {indexed} bytes, this one has {given}: made for another version of it"
    )]
    OtherFile { indexed: u64, given: u64 },
    #[error("the index puts {} / {} / attempt {} past the file's end", .0.question_id, .0.model, .0.attempt)]
    PastTheEnd(TrajectoryKey),
    #[error("not a trajectory line: {0}")]
    NotALine(String),
    /// The first bytes of a line hold no whole key, or do not start a trajectory.
    #[error("the line's first bytes {0}")]
    NoHead(String),
}

/// One line of the file: `key` first, then the trajectory, compact, newline-terminated.
pub fn line(key: &TrajectoryKey, trajectory: &Trajectory) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    struct Line<'a> {
        question_id: &'a str,
        model: &'a str,
        attempt: u32,
        trajectory: &'a Trajectory,
    }
    let mut text = serde_json::to_string(&Line {
        question_id: &key.question_id,
        model: &key.model,
        attempt: key.attempt,
        trajectory,
    })?;
    text.push('\n');
    Ok(text)
}

/// A whole trajectories file of `runs`, in their order, and its index: for files made in
/// memory (`repoprobe synth --trajectories`); `bundle` streams its own.
pub fn file(runs: &[(TrajectoryKey, Trajectory)]) -> Result<(Vec<u8>, Index), serde_json::Error> {
    let mut bytes = Vec::new();
    let mut entries = Vec::with_capacity(runs.len());
    for (key, t) in runs {
        let text = line(key, t)?;
        entries.push(IndexEntry {
            key: key.clone(),
            offset: bytes.len() as u64,
            length: text.len() as u64 - 1,
        });
        bytes.extend_from_slice(text.as_bytes());
    }
    let index = Index::new(bytes.len() as u64, entries);
    Ok((bytes, index))
}

/// A line read back whole (its bytes from the index's range).
pub fn read_line(bytes: &[u8]) -> Result<(TrajectoryKey, Trajectory), TrajectoryError> {
    #[derive(Deserialize)]
    struct Line {
        #[serde(flatten)]
        key: TrajectoryKey,
        trajectory: Trajectory,
    }
    let l: Line =
        serde_json::from_slice(bytes).map_err(|e| TrajectoryError::NotALine(e.to_string()))?;
    Ok((l.key, l.trajectory))
}

/// The key at the start of a line, from its head alone: the text before its top-level
/// `"trajectory":`, closed, read as the three key fields. `None` when the head holds no key
/// first (another writer's order; the line is then read whole).
pub fn key_of_head(head: &[u8]) -> Option<TrajectoryKey> {
    let text = std::str::from_utf8(head)
        .or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
        .ok()?;
    // An unescaped quote cannot sit inside a JSON string, so this is a key of the object.
    let at = text.find(",\"trajectory\":")?;
    let mut prefix = text[..at].to_string();
    prefix.push('}');
    serde_json::from_str(&prefix).ok()
}

/// Makes the index of a trajectories file fed chunk by chunk, keeping only each line's head.
#[derive(Debug, Default)]
pub struct Scanner {
    at: u64,
    line_start: u64,
    line_no: u64,
    head: Vec<u8>,
    entries: Vec<IndexEntry>,
    problems: Vec<String>,
}

impl Scanner {
    pub fn new() -> Scanner {
        Scanner::default()
    }

    pub fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    self.keep_head(&chunk[..i]);
                    self.at += i as u64 + 1;
                    self.end_line(self.at - 1);
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.keep_head(chunk);
                    self.at += chunk.len() as u64;
                    chunk = &[];
                }
            }
        }
    }

    /// The index, and what could not be indexed (a sentence per line, naming it).
    pub fn finish(mut self) -> (Index, Vec<String>) {
        if self.at > self.line_start {
            self.end_line(self.at);
        }
        (Index::new(self.at, self.entries), self.problems)
    }

    fn keep_head(&mut self, part: &[u8]) {
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// The line from `line_start` to `end` (its newline left out) is complete.
    fn end_line(&mut self, end: u64) {
        self.line_no += 1;
        let blank = self.head.iter().all(u8::is_ascii_whitespace);
        if !blank {
            match key_of_head(&self.head) {
                Some(key) => self.entries.push(IndexEntry {
                    key,
                    offset: self.line_start,
                    length: end - self.line_start,
                }),
                None => self.problems.push(format!(
                    "line {}: no answer key (question_id, model, attempt) before its trajectory",
                    self.line_no
                )),
            }
        }
        self.head.clear();
        self.line_start = self.at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::trajectory::{Step, StepSource, TrajectoryAgent};

    fn key(q: &str, a: u32) -> TrajectoryKey {
        TrajectoryKey {
            question_id: q.into(),
            model: "m".into(),
            attempt: a,
        }
    }

    fn trajectory(text: &str) -> Trajectory {
        let mut t = Trajectory::new(TrajectoryAgent {
            name: "builtin".into(),
            version: "1".into(),
            ..TrajectoryAgent::default()
        });
        t.push(Step::new(StepSource::Agent, text));
        t
    }

    #[test]
    fn lines_are_indexed_by_key_in_any_chunking_and_read_back_by_range() {
        let mut file = String::new();
        for (k, text) in [
            (key("q1", 0), "a"),
            (key("q\"2,\"trajectory\":", 1), &"x".repeat(200_000)),
        ] {
            file.push_str(&line(&k, &trajectory(text)).unwrap());
        }
        for chunk in [1, 7, 4096, file.len()] {
            let mut s = Scanner::new();
            for c in file.as_bytes().chunks(chunk) {
                s.feed(c);
            }
            let (index, problems) = s.finish();
            assert!(problems.is_empty(), "{problems:?}");
            assert_eq!(index.bytes, file.len() as u64);
            assert_eq!(index.entries.len(), 2);
            let e = index.find(&key("q\"2,\"trajectory\":", 1)).unwrap();
            let bytes = &file.as_bytes()[e.offset as usize..(e.offset + e.length) as usize];
            let (k, t) = read_line(bytes).unwrap();
            assert_eq!(k.attempt, 1);
            assert_eq!(t.steps[0].message.text().len(), 200_000);
        }
    }

    #[test]
    fn an_index_of_another_file_or_a_foreign_line_is_named() {
        let text = line(&key("q1", 0), &trajectory("a")).unwrap();
        let index = Index::new(text.len() as u64, vec![]);
        let json = serde_json::to_vec(&index).unwrap();
        assert!(Index::read(&json, text.len() as u64).is_ok());
        assert!(
            Index::read(&json, 5)
                .unwrap_err()
                .to_string()
                .contains("another version")
        );
        let past = Index::new(
            10,
            vec![IndexEntry {
                key: key("q", 0),
                offset: 8,
                length: 5,
            }],
        );
        let err = Index::read(&serde_json::to_vec(&past).unwrap(), 10).unwrap_err();
        assert!(matches!(err, TrajectoryError::PastTheEnd(_)), "{err}");
        let mut s = Scanner::new();
        s.feed(b"{\"trajectory\": {}, \"question_id\": \"q\"}\n\n{broken\n");
        let (index, problems) = s.finish();
        assert!(index.entries.is_empty());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[1].starts_with("line 3:"));
    }
}
