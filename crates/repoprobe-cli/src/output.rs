//! The output files of the live calls: append-only JSONL journals, one record per line, written
//! whole and handed to the OS as each key finishes, flushed to disk when the run ends (the
//! journal is dropped). On opening, a torn last line (a kill
//! mid-write) is cut away, a whole last record without its newline is kept, and the keys of the
//! records already there are read back, so that a rerun skips them. Lines with
//! a failure record's `status` (`failed`, `could_not_run`: the core's `model::failure`) are
//! failure records (kept in a separate journal): never a done key.
//! Also the record keys, and [`file_name_part`], their one-to-one form in file names.

use anyhow::Context;
use repoprobe_core::model::failure::FailureHead;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::hash::Hash;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Reads the key of a finished record; `None` for a line that is not one.
pub type KeyOf<K> = fn(&Value) -> Option<K>;

/// The keys of the finished records in the journal at `path`, for a dry run (`--estimate`):
/// read without opening the file for writing, so a torn last line is left as it is (its key is
/// not done, as a run would find it once the line is cut) and a missing file stays missing.
pub fn done_keys<K: Eq + Hash>(path: &Path, key_of: KeyOf<K>) -> anyhow::Result<HashSet<K>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut done = HashSet::new();
    for line in bytes.split(|&b| b == b'\n') {
        if let Ok(v) = serde_json::from_slice::<Value>(line)
            && FailureHead::of(&v).is_none()
            && let Some(k) = key_of(&v)
        {
            done.insert(k);
        }
    }
    Ok(done)
}

/// An append-only JSONL file, one record per line, each line written whole and at once.
pub struct Journal<K> {
    pub path: PathBuf,
    /// Opened in append mode: every write goes to the end, whatever else happened to the file.
    file: Option<File>,
    /// Keys of the finished records already in the file.
    pub done: HashSet<K>,
    /// Bytes of a torn last line that were cut away on opening.
    pub torn_bytes: Option<usize>,
    /// 1-based numbers of complete lines that are neither finished nor failure records.
    pub unreadable: Vec<usize>,
    /// Opening created the file: a run refused before its first record removes it again
    /// ([`Journal::discard_if_new`]), leaving nothing behind.
    created: bool,
}

impl<K: Eq + Hash> Journal<K> {
    /// Opens the journal (creating it), takes its lock, repairs a torn last line and reads the
    /// keys already done. The lock (an advisory exclusive lock on the file, released when the
    /// process ends, even by `kill -9`) keeps a second run from appending the same keys: two
    /// writers would each skip only what was done when they started.
    pub fn open(path: &Path, key_of: KeyOf<K>) -> anyhow::Result<Journal<K>> {
        Journal::open_as(path, key_of, true)
    }

    /// Opens a journal that rides on another's lock (the failures beside `--out`): not locked,
    /// and not created before its first record.
    pub fn open_beside(path: &Path, key_of: KeyOf<K>) -> anyhow::Result<Journal<K>> {
        Journal::open_as(path, key_of, false)
    }

    fn open_as(path: &Path, key_of: KeyOf<K>, lock: bool) -> anyhow::Result<Journal<K>> {
        let mut j = Journal {
            path: path.to_path_buf(),
            file: None,
            done: HashSet::new(),
            torn_bytes: None,
            unreadable: Vec::new(),
            created: !path.exists(),
        };
        if !lock && !path.exists() {
            return Ok(j);
        }
        let mut file = j.open_file()?;
        match if lock { lock_soon(&file) } else { Ok(()) } {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
                "{} is being written by another run (it holds the file's lock): wait for it to \
                 end, or give this run another output file",
                path.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let tail = &bytes[complete..];
        let mut body = &bytes[..complete];
        if tail.iter().all(u8::is_ascii_whitespace) {
            if !tail.is_empty() {
                file.set_len(complete as u64)?;
            }
        } else if serde_json::from_slice::<Value>(tail).is_ok_and(|v| v.is_object()) {
            // The record is whole and only its newline is missing: keep it.
            file.write_all(b"\n")?;
            body = &bytes[..];
        } else {
            file.set_len(complete as u64)
                .with_context(|| format!("cannot repair {}", path.display()))?;
            j.torn_bytes = Some(tail.len());
        }
        for (n, line) in body.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(v) if FailureHead::of(&v).is_some() => {}
                Ok(v) => match key_of(&v) {
                    Some(k) => {
                        j.done.insert(k);
                    }
                    None => j.unreadable.push(n + 1),
                },
                Err(_) => j.unreadable.push(n + 1),
            }
        }
        j.file = Some(file);
        Ok(j)
    }

    /// Takes the records `take` picks out of the journal, keeping every other line as it is:
    /// `keep_them` gets them first (to write them elsewhere), then the file is replaced by one
    /// without them (written beside it, locked and synced before it takes the journal's name),
    /// and their keys are no longer done. Stopped in between, the journal still holds them, so
    /// nothing is lost; at worst a second withdrawal copies them again.
    pub fn withdraw(
        &mut self,
        key_of: KeyOf<K>,
        take: impl Fn(&Value) -> bool,
        keep_them: impl FnOnce(&[Value]) -> anyhow::Result<()>,
    ) -> anyhow::Result<Vec<Value>> {
        let bytes = std::fs::read(&self.path)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        let (mut kept, mut taken) = (Vec::with_capacity(bytes.len()), Vec::new());
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            match serde_json::from_slice::<Value>(line) {
                Ok(v) if FailureHead::of(&v).is_none() && take(&v) => taken.push(v),
                _ => kept.extend_from_slice(line),
            }
        }
        if taken.is_empty() {
            return Ok(taken);
        }
        keep_them(&taken)?;
        let tmp = beside(&self.path, "rewrite.tmp");
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .truncate(false)
            .open(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        lock_soon(&file).map_err(|e| anyhow::anyhow!("cannot lock {}: {e}", tmp.display()))?;
        file.set_len(0)?;
        (&file)
            .write_all(&kept)
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .with_context(|| format!("cannot rewrite {}", self.path.display()))?;
        self.file = Some(file);
        for v in &taken {
            if let Some(k) = key_of(v) {
                self.done.remove(&k);
            }
        }
        Ok(taken)
    }

    /// Removes the file when this opening created it and nothing was written since: a run
    /// refused after opening its journal (its shard is not the run's) leaves no empty file.
    pub fn discard_if_new(&mut self) {
        if self.created && std::fs::metadata(&self.path).is_ok_and(|m| m.len() == 0) {
            self.file = None;
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// Prints what opening found: a torn line cut away, lines that are not records.
    pub fn report(&self, kind: &str) {
        if let Some(n) = self.torn_bytes {
            eprintln!(
                "note: {}: the last line was cut off ({n} bytes, an interrupted write): removed; its key is done again",
                self.path.display()
            );
        }
        if !self.unreadable.is_empty() {
            eprintln!(
                "warning: {}: line(s) {:?} are not {kind} records: left as they are",
                self.path.display(),
                self.unreadable
            );
        }
    }

    fn open_file(&self) -> anyhow::Result<File> {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&self.path)
            .with_context(|| format!("cannot open {}", self.path.display()))
    }

    /// Writes one record as one line and hands it to the OS at once. Every journal of every
    /// command goes through here, so this is where a secret of our environment (a key echoed
    /// in a model's reply or an error) is scrubbed from what is written.
    pub fn append<T: Serialize>(&mut self, record: &T) -> anyhow::Result<()> {
        let text = serde_json::to_string(record)?;
        let mut line = scrubbed_line(text, repoprobe_llm::key::env_secrets())?.into_bytes();
        line.push(b'\n');
        if self.file.is_none() {
            self.file = Some(self.open_file()?);
        }
        let file = self.file.as_mut().expect("opened above");
        file.write_all(&line)
            .and_then(|()| file.flush())
            .with_context(|| format!("cannot write to {}", self.path.display()))
    }
}

/// A record's JSON text without any secret of our environment. A replacement in the text
/// keeps it JSON whenever the secret sits inside a string, which is where keys end up; when it
/// does not (a secret of digits matching a number), the strings are scrubbed one by one.
fn scrubbed_line(text: String, secrets: &[String]) -> anyhow::Result<String> {
    use repoprobe_llm::key::scrub_all;
    let clean = scrub_all(secrets, &text);
    if clean == text || serde_json::from_str::<serde::de::IgnoredAny>(&clean).is_ok() {
        return Ok(clean);
    }
    fn walk(v: &mut Value, secrets: &[String]) {
        match v {
            Value::String(s) => *s = scrub_all(secrets, s),
            Value::Array(a) => a.iter_mut().for_each(|v| walk(v, secrets)),
            Value::Object(o) => o.values_mut().for_each(|v| walk(v, secrets)),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_str(&text)?;
    walk(&mut v, secrets);
    Ok(v.to_string())
}

impl<K> Journal<K> {
    /// Flushes what was appended to the disk (`fsync`): done when the journal is dropped, at the
    /// end of a run, so the records a run reported as written survive a crash of the machine.
    pub fn sync(&mut self) -> std::io::Result<()> {
        match &self.file {
            Some(f) => f.sync_all(),
            None => Ok(()),
        }
    }
}

impl<K> Drop for Journal<K> {
    fn drop(&mut self) {
        if let Err(e) = self.sync() {
            eprintln!(
                "warning: {}: could not flush to disk: {e}",
                self.path.display()
            );
        }
    }
}

/// How long a run waits for the lock of its output before saying another run holds it. A run
/// killed with `kill -9` while it was starting a child process leaves that child a copy of its
/// files until the child's `exec`, which can take a moment on a loaded machine: the lock comes
/// free then, and a rerun started at once should not be refused for it.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

fn lock_soon(file: &File) -> Result<(), std::fs::TryLockError> {
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// A file beside the output journal: `J.jsonl` → `J.<suffix>` (the failures journal, the batch
/// record, the transcripts directory all sit there, named after it).
pub fn beside(out: &Path, suffix: &str) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    out.with_file_name(format!("{stem}.{suffix}"))
}

/// `J.jsonl` → `J.failures.ndjson` (`.ndjson`, so that `score` on a directory never reads it).
pub fn failures_path(out: &Path) -> PathBuf {
    beside(out, "failures.ndjson")
}

/// A key part (a question id, a model name) as part of a file name, one to one: ASCII letters,
/// digits, `-` and `.` stay, every other byte becomes `_` and two hex digits (`q/1` → `q_2F1`,
/// `q_1` → `q_5F1`), so two keys never share a worktree or a transcript, and the parts joined by
/// `__` can be told apart (an encoded part never holds `__`). A part longer than
/// [`MAX_NAME_PART`] keeps its first characters and ends in `_~` and a stable hash of the whole.
pub fn file_name_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("_{b:02X}"));
        }
    }
    if out.len() <= MAX_NAME_PART {
        return out;
    }
    let cut = out.floor_char_boundary(MAX_NAME_PART - 18);
    format!(
        "{}_~{:016x}",
        &out[..cut],
        crate::shard::fnv1a(s.as_bytes())
    )
}

/// Longest [`file_name_part`]: three of them and a suffix stay well under the 255 bytes of a
/// file name.
pub const MAX_NAME_PART: usize = 72;

/// A string field of a record.
pub fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)?.as_str().map(str::to_string)
}

/// A count field of a record, 0 when absent or null.
pub fn count(v: &Value, k: &str) -> Option<u32> {
    match v.get(k) {
        None | Some(Value::Null) => Some(0),
        Some(x) => x.as_u64().and_then(|x| u32::try_from(x).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_files::keys::JudgmentKey;
    use repoprobe_core::RecordKind;

    #[test]
    fn a_journal_line_never_carries_a_secret_of_ours_and_stays_json() {
        let secrets = vec!["sk-judge-0123456789".to_string(), "31415926535".to_string()];
        let rec = serde_json::json!({
            "rationale": "the key is sk-judge-0123456789, see",
            "n": 31415926535u64,
            "items": [{"note": "pi 31415926535"}],
        });
        let line = scrubbed_line(rec.to_string(), &secrets).unwrap();
        let v: Value = serde_json::from_str(&line).expect("still JSON");
        assert_eq!(v["rationale"], "the key is [redacted], see");
        assert_eq!(v["items"][0]["note"], "pi [redacted]");
        // A number is no text that could carry a key: it stays, the line stays JSON.
        assert_eq!(v["n"], 31415926535u64);
        assert!(!line.contains("sk-judge"));
        let plain = serde_json::json!({"a": "nothing secret"}).to_string();
        assert_eq!(scrubbed_line(plain.clone(), &secrets).unwrap(), plain);
    }

    fn key(v: &Value) -> Option<JudgmentKey> {
        JudgmentKey::of(v, RecordKind::Judgment)
    }

    #[test]
    fn the_failures_journal_sits_beside_the_output() {
        assert_eq!(
            failures_path(Path::new("out/j.jsonl")),
            Path::new("out/j.failures.ndjson")
        );
        assert_eq!(
            failures_path(Path::new("j.json")),
            Path::new("j.json.failures.ndjson")
        );
    }

    #[test]
    fn file_name_parts_never_collide_and_common_ids_stay_as_they_are() {
        assert_eq!(file_name_part("q17"), "q17");
        assert_eq!(file_name_part("claude-sonnet-4.5"), "claude-sonnet-4.5");
        assert_eq!(file_name_part("q/1"), "q_2F1");
        assert_eq!(file_name_part("q_1"), "q_5F1");
        assert_eq!(file_name_part("django/q 1"), "django_2Fq_201");
        assert_eq!(file_name_part("é"), "_C3_A9");
        let parts = [
            "q/1", "q_1", "q 1", "q_2F1", "q1", "", "_", "a__b", "a_", "a",
        ];
        let names: HashSet<String> = parts.iter().map(|p| file_name_part(p)).collect();
        assert_eq!(names.len(), parts.len());
        // Joined by `__`, (a, b) pairs stay apart too.
        let joined: HashSet<String> = [("a_", "b"), ("a", "_b"), ("a__b", ""), ("a", "b")]
            .iter()
            .map(|(a, b)| format!("{}__{}", file_name_part(a), file_name_part(b)))
            .collect();
        assert_eq!(joined.len(), 4);
        let long_a = "x".repeat(300);
        let long_b = format!("{}y", "x".repeat(299));
        let (a, b) = (file_name_part(&long_a), file_name_part(&long_b));
        assert!(a.len() <= MAX_NAME_PART && b.len() <= MAX_NAME_PART, "{a}");
        assert_ne!(a, b);
        assert_eq!(a, file_name_part(&long_a), "stable");
        assert!(file_name_part(&"/".repeat(100)).len() <= MAX_NAME_PART);
    }

    #[test]
    fn a_torn_last_line_is_cut_and_whole_lines_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let line =
            r#"{"question_id":"q1","model":"A","attempt":0,"judge":"J","judge_run":0,"items":[]}"#;
        std::fs::write(&p, format!("{line}\n{}", &line[..30])).unwrap();
        let mut j = Journal::open(&p, key).unwrap();
        assert_eq!(j.torn_bytes, Some(30));
        assert_eq!(j.done.len(), 1);
        j.append(&serde_json::json!({"x": 1})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{line}\n{{\"x\":1}}\n")
        );
        drop(j);
        // A whole record without its newline is kept, not cut.
        std::fs::write(&p, line).unwrap();
        let j = Journal::open(&p, key).unwrap();
        assert_eq!((j.torn_bytes, j.done.len()), (None, 1));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{line}\n"));
        drop(j);
        // A record of another kind is not a done key.
        let j = Journal::open(&p, |v| JudgmentKey::of(v, RecordKind::ScalarJudgment)).unwrap();
        assert_eq!((j.done.len(), j.unreadable.as_slice()), (0, &[1][..]));
    }

    #[test]
    fn a_dry_run_reads_the_keys_done_and_leaves_a_torn_journal_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        assert!(done_keys(&p, key).unwrap().is_empty());
        assert!(!p.exists(), "a missing journal stays missing");
        let line =
            r#"{"question_id":"q1","model":"A","attempt":0,"judge":"J","judge_run":0,"items":[]}"#;
        let failed = r#"{"question_id":"q2","model":"A","attempt":0,"judge":"J","judge_run":0,"status":"failed","reason":"r"}"#;
        let torn = format!("{line}\n{failed}\n{}", &line[..30]);
        std::fs::write(&p, &torn).unwrap();
        let done = done_keys(&p, key).unwrap();
        assert_eq!(
            done.len(),
            1,
            "the failure is not done, the torn line not read"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), torn, "nothing cut");
    }
}

#[cfg(test)]
mod lock_tests {
    use super::*;
    use crate::run_files::keys::JudgmentKey;
    use repoprobe_core::RecordKind;

    #[test]
    fn a_second_writer_is_refused_until_the_first_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let first = Journal::open(&p, |v| JudgmentKey::of(v, RecordKind::Judgment)).unwrap();
        let Err(e) = Journal::open(&p, |v| JudgmentKey::of(v, RecordKind::Judgment)) else {
            panic!("two writers of one journal");
        };
        assert!(e.to_string().contains("another run"), "{e}");
        drop(first);
        assert!(Journal::open(&p, |v| JudgmentKey::of(v, RecordKind::Judgment)).is_ok());
    }
}
