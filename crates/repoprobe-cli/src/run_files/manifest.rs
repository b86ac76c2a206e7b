//! The run's manifest: what makes the outputs of many shards one run. The first shard to start
//! writes it beside the outputs (created without replacing, so two shards starting at once
//! agree on one); every shard, the first included, reads it back and joins only when its own
//! inputs (by content), prompt versions, model, agent and flags that change results are the
//! same, naming each difference otherwise.

use super::kind::RunKind;
use crate::input::write_atomically;
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The `format` of a manifest.
pub const FORMAT: &str = "repoprobe-run-manifest";

/// A run: its identity (everything but `run_id`, `created_unix_s` and `keys_per_shard`, which
/// follow from it) and the counts `status` needs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// Random, written into each shard's note: a shard's files belong to this run.
    pub run_id: String,
    pub created_unix_s: u64,
    /// The command (`judge`, `answer`, …): which records the run writes, and so how their keys
    /// read.
    pub command: RunKind,
    /// `--out` as given by the first shard (relative to where it ran).
    pub out: String,
    /// The shard count (1 without `--shard`).
    pub shards: u32,
    /// With `--shard I/N` and an `--out` without `{shard}`: the one shard this output holds.
    pub shard_in_file: Option<u32>,
    /// Keys of each shard, all of them (done or not), for `status`.
    pub keys_per_shard: Vec<u64>,
    /// Each input by its role (`benchmark`, `answers`, …): where the first shard read it, and
    /// its content's size and SHA-256 (what is compared: paths differ between nodes).
    pub inputs: BTreeMap<String, InputFile>,
    /// Prompt versions, model, provider, agent and CLI versions, the flags that change results.
    pub settings: BTreeMap<String, Value>,
    /// The flags that choose the keys (judge runs, attempts, questions): the shards of a run
    /// must agree on them; a run of one process may grow (a rerun with `--runs 2` adds the
    /// second judge run), and its manifest follows.
    #[serde(default)]
    pub scope: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InputFile {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

impl InputFile {
    /// Reads and hashes `path` (streamed); a directory is its `.json` and `.jsonl` files (what
    /// the commands read of it), by name and content, in name order.
    pub fn hash(path: &Path) -> anyhow::Result<InputFile> {
        let mut h = Sha256::new();
        let mut bytes = 0u64;
        let files = if path.is_dir() {
            crate::input::dir_files(path)
                .with_context(|| format!("cannot read {}", path.display()))?
        } else {
            vec![path.to_path_buf()]
        };
        let mut buf = vec![0u8; 1 << 20];
        for file in &files {
            if path.is_dir() {
                let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
                h.update(name.unwrap_or_default().as_bytes());
                h.update([0u8]);
            }
            let mut f = std::fs::File::open(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            loop {
                let n = f
                    .read(&mut buf)
                    .with_context(|| format!("cannot read {}", file.display()))?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
                h.update(&buf[..n]);
            }
        }
        Ok(InputFile {
            path: path.display().to_string(),
            bytes,
            sha256: format!("{:x}", h.finalize()),
        })
    }
}

/// What a command says of its run, before its keys are counted.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub kind: RunKind,
    pub inputs: Vec<(String, PathBuf)>,
    pub settings: BTreeMap<String, Value>,
    pub scope: BTreeMap<String, Value>,
}

impl RunSpec {
    /// A run of `kind`: a kind, not a name, so that every run written is one whose records'
    /// keys `status` and `merge` can read.
    pub fn new(kind: RunKind) -> RunSpec {
        RunSpec {
            kind,
            inputs: Vec::new(),
            settings: BTreeMap::new(),
            scope: BTreeMap::new(),
        }
    }

    /// Adds an input file by its role.
    pub fn input(mut self, role: &str, path: &Path) -> RunSpec {
        self.inputs.push((role.to_string(), path.to_path_buf()));
        self
    }

    /// Adds the positional input files (`FILE…`), by their place: the shards of a run give the
    /// same files in the same order (a file's content is compared, not its path).
    pub fn files(self, paths: &[PathBuf]) -> RunSpec {
        paths.iter().enumerate().fold(self, |spec, (i, p)| {
            spec.input(&format!("file {}", i + 1), p)
        })
    }

    /// Adds a setting (a flag that changes results, a version); `null` values are kept, so a
    /// flag given in one shard and not in another is a difference.
    pub fn set(mut self, name: &str, value: impl Serialize) -> RunSpec {
        self.settings.insert(
            name.to_string(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }
}

impl RunSpec {
    /// Adds a flag that chooses the keys (see [`Manifest::scope`]).
    pub fn scope(mut self, name: &str, value: impl Serialize) -> RunSpec {
        self.scope.insert(
            name.to_string(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }
}

impl Manifest {
    /// This shard's manifest: `spec` with its inputs hashed, for `--out` `template`.
    pub fn of(
        spec: &RunSpec,
        template: &Path,
        shards: u32,
        shard_in_file: Option<u32>,
        keys_per_shard: Vec<u64>,
    ) -> anyhow::Result<Manifest> {
        let mut inputs = BTreeMap::new();
        for (role, path) in &spec.inputs {
            inputs.insert(role.to_string(), InputFile::hash(path)?);
        }
        let mut settings = spec.settings.clone();
        settings.insert("repoprobe".into(), Value::from(env!("CARGO_PKG_VERSION")));
        Ok(Manifest {
            format: FORMAT.into(),
            version: 1,
            run_id: random_id(),
            created_unix_s: super::unix_now(),
            command: spec.kind,
            out: template
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            shards,
            shard_in_file,
            keys_per_shard,
            inputs,
            settings,
            scope: spec.scope.clone(),
        })
    }

    /// How `mine` differs from this run, one line each (empty: it may join).
    pub fn differences(&self, mine: &Manifest) -> Vec<String> {
        let mut d = Vec::new();
        if self.command != mine.command {
            d.push(format!(
                "the command: the run is `{}`, this is `{}`",
                self.command, mine.command
            ));
        }
        if self.out != mine.out {
            d.push(format!(
                "--out: the run writes {:?}, this shard {:?}",
                self.out, mine.out
            ));
        }
        if self.shards != mine.shards || self.shard_in_file != mine.shard_in_file {
            d.push(format!(
                "the shards: the run has {}{}, this shard says {}{}",
                self.shards,
                self.shard_in_file
                    .map_or(String::new(), |i| format!(" (this file: shard {i})")),
                mine.shards,
                mine.shard_in_file
                    .map_or(String::new(), |i| format!(" (this file: shard {i})")),
            ));
        }
        let roles: std::collections::BTreeSet<&String> =
            self.inputs.keys().chain(mine.inputs.keys()).collect();
        for role in roles {
            match (self.inputs.get(role), mine.inputs.get(role)) {
                (Some(a), Some(b)) if a.sha256 == b.sha256 && a.bytes == b.bytes => {}
                (Some(a), Some(b)) => d.push(format!(
                    "the {role} input: the run read {} ({} bytes, sha256 {}…), this shard {} \
                     ({} bytes, sha256 {}…)",
                    a.path,
                    a.bytes,
                    &a.sha256[..a.sha256.len().min(12)],
                    b.path,
                    b.bytes,
                    &b.sha256[..b.sha256.len().min(12)]
                )),
                (a, b) => d.push(format!(
                    "the {role} input: the run has {}, this shard {}",
                    a.map_or("none".into(), |f| f.path.clone()),
                    b.map_or("none".into(), |f| f.path.clone())
                )),
            }
        }
        let mut names: Vec<(&String, Option<&Value>, Option<&Value>)> = Vec::new();
        let keys: std::collections::BTreeSet<&String> =
            self.settings.keys().chain(mine.settings.keys()).collect();
        names.extend(
            keys.into_iter()
                .map(|k| (k, self.settings.get(k), mine.settings.get(k))),
        );
        if self.shards > 1 || mine.shards > 1 {
            let keys: std::collections::BTreeSet<&String> =
                self.scope.keys().chain(mine.scope.keys()).collect();
            names.extend(
                keys.into_iter()
                    .map(|k| (k, self.scope.get(k), mine.scope.get(k))),
            );
        }
        for (name, a, b) in names {
            if a != b {
                d.push(format!(
                    "{name}: the run has {}, this shard {}",
                    a.map_or("nothing".into(), Value::to_string),
                    b.map_or("nothing".into(), Value::to_string),
                ));
            }
        }
        d
    }
}

/// Joins the run whose manifest is at `path`, writing `mine` there if no shard has yet; returns
/// the run's manifest. Refused, with every difference named, when `mine` is not the same run.
pub fn enlist(path: &Path, mine: &Manifest) -> anyhow::Result<Manifest> {
    if !path.exists() {
        create(path, mine)?;
    }
    let mut run = read(path)?;
    let diff = run.differences(mine);
    if !diff.is_empty() {
        bail!(
            "this shard is not part of the run in {}, which it would write into:\n  - {}\n\
             Give it the run's inputs and flags, or another --out for a new run (delete {} only \
             if the outputs beside it should be thrown away).",
            path.display(),
            diff.join("\n  - "),
            path.display()
        );
    }
    if run.scope != mine.scope || run.keys_per_shard != mine.keys_per_shard {
        // One process, more (or other) keys: the run grows; the outputs stay its own.
        run.scope = mine.scope.clone();
        run.keys_per_shard = mine.keys_per_shard.clone();
        let mut text = serde_json::to_vec_pretty(&run)?;
        text.push(b'\n');
        write_atomically(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(run)
}

/// Writes a manifest unless one is there: the first of several shards starting at once wins,
/// the others read it (a hard link does not replace, on local and network file systems alike).
fn create(path: &Path, m: &Manifest) -> anyhow::Result<()> {
    let dir = crate::input::dir_of(path);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut text = serde_json::to_vec_pretty(m)?;
    text.push(b'\n');
    let tmp = dir.join(format!(".{}.{}", random_id(), "manifest-new"));
    write_atomically(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
    }
}

/// Why a file is not a run's manifest that this repoprobe reads.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read {}: {source}", .path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a repoprobe run manifest: {source}", .path.display())]
    Malformed {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} is not a repoprobe run manifest (format {format})", .path.display())]
    Format { path: PathBuf, format: Value },
    /// A command that writes no run, or one of a newer repoprobe: its records' keys are unknown,
    /// so nothing of the run could be counted.
    #[error(
        "{}: the run is of the command {command:?}, which writes no run this repoprobe reads \
         (it reads runs of {}); a manifest written by a newer repoprobe is read by that version",
        .path.display(),
        RunKind::names()
    )]
    UnknownCommand { path: PathBuf, command: String },
    #[error("{}: {shards} shard(s) but {counts} key counts", .path.display())]
    ShardCounts {
        path: PathBuf,
        shards: u32,
        counts: usize,
    },
}

/// Reads a run's manifest: its format, then its command, checked before the rest, so that a
/// file of another kind or a run of an unknown command is named as such.
pub fn read(path: &Path) -> Result<Manifest, ManifestError> {
    let malformed = |source| ManifestError::Malformed {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read(path).map_err(|source| ManifestError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let v: Value = serde_json::from_slice(&text).map_err(malformed)?;
    let format = v.get("format").cloned().unwrap_or(Value::Null);
    if format != FORMAT {
        return Err(ManifestError::Format {
            path: path.to_path_buf(),
            format,
        });
    }
    if let Some(command) = v.get("command").and_then(Value::as_str)
        && RunKind::named(command).is_none()
    {
        return Err(ManifestError::UnknownCommand {
            path: path.to_path_buf(),
            command: command.to_string(),
        });
    }
    let m: Manifest = serde_json::from_value(v).map_err(malformed)?;
    if m.keys_per_shard.len() != m.shards as usize || m.shards == 0 {
        return Err(ManifestError::ShardCounts {
            path: path.to_path_buf(),
            shards: m.shards,
            counts: m.keys_per_shard.len(),
        });
    }
    Ok(m)
}

/// 128 random bits as hex, from the OS.
pub fn random_id() -> String {
    let mut b = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_err()
    {
        // No /dev/urandom: the clock and the process id, unique enough for a run's name.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = (t ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, answers: &str, model: &str) -> RunSpec {
        let a = dir.join("answers.jsonl");
        std::fs::write(&a, answers).unwrap();
        RunSpec::new(RunKind::Judge)
            .input("answers", &a)
            .set("model", model)
            .set("temperature", Option::<f64>::None)
    }

    #[test]
    fn the_first_shard_writes_the_run_and_the_same_run_joins_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.manifest");
        let t = Path::new("j-{shard}.jsonl");
        let a = Manifest::of(&spec(dir.path(), "x\n", "m"), t, 2, None, vec![3, 4]).unwrap();
        let run = enlist(&path, &a).unwrap();
        assert_eq!(run, a);
        let b = Manifest::of(&spec(dir.path(), "x\n", "m"), t, 2, None, vec![3, 4]).unwrap();
        assert_ne!(a.run_id, b.run_id);
        let joined = enlist(&path, &b).unwrap();
        assert_eq!(joined.run_id, a.run_id, "the run is the first shard's");
        assert_eq!(
            a.inputs["answers"].sha256,
            "73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac"
        );
    }

    #[test]
    fn a_shard_with_other_inputs_or_flags_is_refused_with_each_difference_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.manifest");
        let t = Path::new("j-{shard}.jsonl");
        let a = Manifest::of(&spec(dir.path(), "x\n", "m"), t, 2, None, vec![3, 4]).unwrap();
        enlist(&path, &a).unwrap();
        let b = Manifest::of(&spec(dir.path(), "y\n", "other"), t, 3, None, vec![1, 2, 3]).unwrap();
        let e = enlist(&path, &b).unwrap_err().to_string();
        assert!(e.contains("the answers input"), "{e}");
        assert!(
            e.contains(r#"model: the run has "m", this shard "other""#),
            "{e}"
        );
        assert!(e.contains("the shards: the run has 2"), "{e}");
        assert!(!e.contains("temperature"), "{e}");
        std::fs::write(&path, "{}").unwrap();
        let e = format!("{:#}", enlist(&path, &a).unwrap_err());
        assert!(e.contains("not a repoprobe run manifest"), "{e}");
    }
}
