//! What a run's files say of its progress: per shard, the keys done and failed (from its
//! journals), the keys left, tokens and cost, when it last wrote, and which run wrote it.
//! Read by `status` and `merge`; no file is written here.

use super::kind::RecordKey;
use super::manifest::{self, Manifest};
use super::{Layout, ShardNote};
use crate::output::text;
use crate::shard::Shard;
use anyhow::{Context, bail};
use repoprobe_core::model::failure::{Cause, FailureHead, Status};
use repoprobe_llm::Tokens;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A run as its files show it.
pub struct RunState {
    pub manifest_path: PathBuf,
    pub manifest: Manifest,
    pub shards: Vec<ShardState>,
}

/// One shard as its files show it.
pub struct ShardState {
    pub shard: Option<Shard>,
    pub out: PathBuf,
    /// The run's keys of this shard (from the manifest).
    pub keys: u64,
    /// Distinct keys of this shard with a record in its output.
    pub done: u64,
    /// Distinct keys whose last outcome was a failure record (and that are not done).
    pub failed: u64,
    /// Of `failed`, the keys whose last failure was that they could not run, by cause.
    pub could_not_run: BTreeMap<Cause, u64>,
    /// Records whose key was already in the output (or in another shard's: see `merge`).
    pub duplicates: u64,
    /// Records of keys that belong to another shard.
    pub elsewhere: u64,
    /// Lines that are neither a record nor a failure of this command.
    pub unreadable: u64,
    pub tokens: Tokens,
    pub last_write: Option<SystemTime>,
    /// Who wrote the shard last; `None` when it never started.
    pub note: Option<ShardNote>,
    /// The done records as written: (key, line).
    pub records: Vec<(RecordKey, String)>,
    /// A `curate` stage's records of what it dropped (`<out>.excluded.ndjson`), as written:
    /// (key, line). Their keys are done: dropped is decided.
    pub excluded: Vec<(RecordKey, String)>,
}

impl ShardState {
    /// Keys neither done nor failed.
    pub fn left(&self) -> u64 {
        self.keys.saturating_sub(self.done + self.failed)
    }

    /// Whether the shard's files were written by another run (a note naming another run id).
    pub fn foreign(&self, run: &Manifest) -> bool {
        self.note.as_ref().is_some_and(|n| n.run_id != run.run_id)
    }

    /// Every key done, nothing from elsewhere, written by this run.
    pub fn complete(&self, run: &Manifest) -> bool {
        self.done == self.keys
            && self.failed == 0
            && self.elsewhere == 0
            && self.duplicates == 0
            && !self.foreign(run)
    }

    /// Why the shard is not complete, in words ("2 failed, 3 left").
    pub fn problems(&self, run: &Manifest) -> Vec<String> {
        let mut p = Vec::new();
        if self.note.is_none() && self.done == 0 {
            p.push("not started".into());
        }
        if self.failed > 0 {
            let by: Vec<String> = self
                .could_not_run
                .iter()
                .map(|(cause, n)| format!("{n} {}", cause.describe()))
                .collect();
            let why = if by.is_empty() {
                String::new()
            } else {
                format!(
                    "{} could not run: {}; ",
                    self.could_not_run.values().sum::<u64>(),
                    by.join(", ")
                )
            };
            p.push(format!(
                "{} failed ({why}a rerun of this shard tries them again)",
                self.failed
            ));
        }
        if self.left() > 0 && !(self.note.is_none() && self.done == 0) {
            p.push(format!("{} left", self.left()));
        }
        if self.duplicates > 0 {
            p.push(format!("{} duplicate record(s)", self.duplicates));
        }
        if self.elsewhere > 0 {
            p.push(format!(
                "{} record(s) of another shard's keys",
                self.elsewhere
            ));
        }
        if self.foreign(run) {
            p.push(format!(
                "written by another run ({} names run {})",
                Layout::note(&self.out).display(),
                self.note.as_ref().map_or("", |n| n.run_id.as_str())
            ));
        }
        p
    }
}

/// Reads the run of the manifest at `path` and every shard's files.
pub fn read_run(path: &Path) -> anyhow::Result<RunState> {
    let m = manifest::read(path)?;
    let template = path.with_file_name(&m.out);
    let shards: Vec<Option<Shard>> = match (m.shards, m.shard_in_file) {
        (1, None) => vec![None],
        (n, Some(i)) => vec![Some(Shard { index: i, count: n })],
        (n, None) => (0..n)
            .map(|index| Some(Shard { index, count: n }))
            .collect(),
    };
    let mut out = Vec::new();
    for shard in shards {
        let file = Layout::new(&template, None, shard)?.out;
        out.push(read_shard(&m, shard, file)?);
    }
    Ok(RunState {
        manifest_path: path.to_path_buf(),
        manifest: m,
        shards: out,
    })
}

fn read_shard(m: &Manifest, shard: Option<Shard>, out: PathBuf) -> anyhow::Result<ShardState> {
    let keys = m.keys_per_shard[shard.map_or(0, |s| s.index) as usize];
    let mut s = ShardState {
        shard,
        keys,
        done: 0,
        failed: 0,
        could_not_run: BTreeMap::new(),
        duplicates: 0,
        elsewhere: 0,
        unreadable: 0,
        tokens: Tokens::default(),
        last_write: None,
        note: std::fs::read(Layout::note(&out))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok()),
        records: Vec::new(),
        excluded: Vec::new(),
        out,
    };
    let failures_path = crate::output::failures_path(&s.out);
    let mut done = HashSet::new();
    // The last failure of each key: whether it could not run, and why.
    let mut failed: HashMap<RecordKey, Option<Cause>> = HashMap::new();
    for (path, failures) in [(s.out.clone(), false), (failures_path, true)] {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if !failures {
            s.last_write = std::fs::metadata(&path).and_then(|md| md.modified()).ok();
        }
        // A torn last line (a task killed mid-write) is not a record: its key is left.
        let whole = text.rfind('\n').map_or("", |i| &text[..=i]);
        for line in whole.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                s.unreadable += 1;
                continue;
            };
            let failure = FailureHead::of(&v);
            let Some(key) = m.command.key_of(&v) else {
                s.unreadable += 1;
                continue;
            };
            s.tokens += usage(&v);
            if let Some(head) = failure {
                failed.insert(
                    key,
                    head.cause.filter(|_| head.status == Status::CouldNotRun),
                );
                continue;
            }
            if failures {
                s.unreadable += 1;
                continue;
            }
            if shard.is_some_and(|sh| !sh.owns(&key)) {
                s.elsewhere += 1;
            }
            if !done.insert(key.clone()) {
                s.duplicates += 1;
                continue;
            }
            s.records.push((key, line.to_string()));
        }
    }
    if let Some(excluded_key) = m.command.excluded_key() {
        read_excluded(&mut s, &mut done, excluded_key)?;
    }
    s.done = done.len() as u64;
    for cause in failed
        .iter()
        .filter(|(id, _)| !done.contains(*id))
        .map(|(_, c)| c)
    {
        s.failed += 1;
        if let Some(c) = cause {
            *s.could_not_run.entry(*c).or_default() += 1;
        }
    }
    Ok(s)
}

/// A `curate` stage's excluded journal: each key dropped is done (`key_of` reads it as the
/// stage's records name it: a thread's key, a question's id).
fn read_excluded(
    s: &mut ShardState,
    done: &mut HashSet<RecordKey>,
    key_of: fn(String) -> RecordKey,
) -> anyhow::Result<()> {
    let path = crate::output::beside(&s.out, "excluded.ndjson");
    let body = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let whole = body.rfind('\n').map_or("", |i| &body[..=i]);
    for line in whole.lines().filter(|l| !l.trim().is_empty()) {
        let Some(key) = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| text(&v, "key"))
        else {
            s.unreadable += 1;
            continue;
        };
        let key = key_of(key);
        if done.insert(key.clone()) {
            s.excluded.push((key, line.to_string()));
        } else {
            s.duplicates += 1;
        }
    }
    Ok(())
}

/// The tokens a record says it spent (`usage`), 0 when it does not say.
fn usage(v: &Value) -> Tokens {
    let n = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Tokens {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
    }
}

/// The manifests a path names: a manifest itself; every `*.manifest` of a directory; for an
/// output file, the run whose note it carries (or whose shard files include it).
pub fn manifests(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if path.is_dir() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "manifest") && p.is_file())
            .collect();
        found.sort();
        if found.is_empty() {
            bail!(
                "{} holds no run manifest (*.manifest): no run of repoprobe wrote there",
                path.display()
            );
        }
        return Ok(found);
    }
    if path.extension().is_some_and(|e| e == "manifest") {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.exists() {
        bail!("{} does not exist", path.display());
    }
    let dir = crate::input::dir_of(path);
    for m in manifests(dir)? {
        let Ok(run) = read_run(&m) else { continue };
        if run.shards.iter().any(|s| same_file(&s.out, path)) {
            return Ok(vec![m]);
        }
    }
    bail!(
        "{} is not an output of any run manifest beside it",
        path.display()
    )
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_files::kind::RunKind;
    use crate::run_files::manifest::RunSpec;

    #[test]
    fn a_run_state_counts_done_failed_left_and_what_does_not_belong() {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("j-{shard}.jsonl");
        let layout = |i| Layout::new(&template, None, Some(Shard { index: i, count: 2 })).unwrap();
        let rec = |q: &str, run: u32| {
            format!(
                r#"{{"question_id":"{q}","model":"A","attempt":0,"judge":"J","judge_run":{run},"items":[],"usage":{{"input_tokens":10,"output_tokens":2}}}}"#
            )
        };
        // Find keys of each shard.
        let owner = |q: &str| {
            let shown = format!("{q} / A / attempt 0 / run 0");
            (0..2)
                .find(|&i| Shard { index: i, count: 2 }.owns(&shown))
                .unwrap()
        };
        let qs: Vec<String> = (0..20).map(|i| format!("q{i}")).collect();
        let mine: Vec<&String> = qs.iter().filter(|q| owner(q) == 0).collect();
        let theirs: Vec<&String> = qs.iter().filter(|q| owner(q) == 1).collect();
        let keys: Vec<String> = qs
            .iter()
            .map(|q| format!("{q} / A / attempt 0 / run 0"))
            .collect();
        let l0 = layout(0);
        crate::run_files::enlist(&l0, &RunSpec::new(RunKind::Judge), keys.iter()).unwrap();
        let body = format!(
            "{}\n{}\n{}\n{}\n{}",
            rec(mine[0], 0),
            rec(mine[1], 0),
            rec(mine[1], 0),
            rec(theirs[0], 0),
            &rec(mine[2], 0)[..20]
        );
        std::fs::write(&l0.out, body).unwrap();
        std::fs::write(
            &l0.failures,
            format!(
                "{{\"question_id\":\"{}\",\"model\":\"A\",\"attempt\":0,\"judge\":\"J\",\"judge_run\":0,\"status\":\"failed\",\"reason\":\"x\"}}\n\
                 {{\"question_id\":\"{}\",\"model\":\"A\",\"attempt\":0,\"judge\":\"J\",\"judge_run\":0,\"status\":\"could_not_run\",\"cause\":\"auth\",\"reason\":\"HTTP 401\"}}\n",
                mine[3], mine[4]
            ),
        )
        .unwrap();
        let run = read_run(&l0.manifest).unwrap();
        let s = &run.shards[0];
        assert_eq!(s.keys as usize, mine.len());
        assert_eq!((s.done, s.failed, s.duplicates, s.elsewhere), (3, 2, 1, 1));
        assert_eq!(
            s.could_not_run.iter().collect::<Vec<_>>(),
            [(&Cause::Auth, &1)]
        );
        assert!(
            s.problems(&run.manifest)
                .contains(&"2 failed (1 could not run: 1 authentication; a rerun of this shard tries them again)".to_string()),
            "{:?}",
            s.problems(&run.manifest)
        );
        assert_eq!(s.left() as usize, mine.len() - 5);
        assert_eq!(s.tokens.input_tokens, 40);
        assert!(!s.complete(&run.manifest));
        let shard1 = &run.shards[1];
        assert_eq!(shard1.problems(&run.manifest), ["not started"]);
        assert_eq!(manifests(dir.path()).unwrap(), vec![l0.manifest.clone()]);
        assert_eq!(manifests(&l0.out).unwrap(), vec![l0.manifest.clone()]);
        // A note of another run makes the shard foreign.
        let mut note: ShardNote =
            serde_json::from_slice(&std::fs::read(Layout::note(&l0.out)).unwrap()).unwrap();
        note.run_id = "other".into();
        std::fs::write(Layout::note(&l0.out), serde_json::to_vec(&note).unwrap()).unwrap();
        let run = read_run(&l0.manifest).unwrap();
        assert!(run.shards[0].foreign(&run.manifest));
    }
}
