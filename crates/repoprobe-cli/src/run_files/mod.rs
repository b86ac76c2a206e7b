//! A run's files, as one thing across the tasks of a cluster job: where each shard writes
//! (`--out` with `{shard}`), the run's manifest that every shard joins or is refused by
//! ([`manifest`]), the command it is of ([`kind`]) and how that command's records name their keys
//! ([`keys`]), each shard's note of who wrote it last ([`ShardNote`]), what SIGTERM does to a
//! run in progress ([`stop`]), and what a run's files say of its progress ([`state`], read by
//! `status` and `merge`).

pub mod keys;
pub mod kind;
pub mod manifest;
pub mod state;
pub mod stop;

use crate::output::{beside, failures_path};
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What `--out` may hold, replaced by the shard's [`Shard::label`].
pub const SHARD_MARK: &str = "{shard}";

/// The files of one shard of a run (or of a whole run without `--shard`).
#[derive(Debug, Clone)]
pub struct Layout {
    /// `--out` as given (it may hold `{shard}`).
    pub template: PathBuf,
    pub shard: Option<Shard>,
    /// This shard's output journal.
    pub out: PathBuf,
    /// This shard's failures journal.
    pub failures: PathBuf,
    /// The run's manifest, shared by every shard.
    pub manifest: PathBuf,
}

impl Layout {
    /// The files of `shard` for `--out` (`template`) and `--failures`.
    pub fn new(
        template: &Path,
        failures: Option<&Path>,
        shard: Option<Shard>,
    ) -> Result<Layout, LayoutError> {
        let out = render(template, shard, "--out")?;
        let failures = match failures {
            Some(f) => {
                if shard.is_some_and(|s| s.count > 1) && has_mark(template) && !has_mark(f) {
                    return Err(LayoutError::SharedFailures(f.to_path_buf()));
                }
                render(f, shard, "--failures")?
            }
            None => failures_path(&out),
        };
        Ok(Layout {
            template: template.to_path_buf(),
            shard,
            out,
            failures,
            manifest: manifest_path(template),
        })
    }

    /// The note beside a shard's output: who wrote it last, in which run.
    pub fn note(out: &Path) -> PathBuf {
        beside(out, "shard")
    }
}

/// Why `--out` and `--failures` name no files for this shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// `{shard}` in a directory of the path: the shards' outputs would not sit beside the run's
    /// one manifest.
    #[error(
        "{flag} {}: {SHARD_MARK} belongs in the file name, not in a directory (every shard \
         writes beside the run's manifest)",
        .path.display()
    )]
    MarkInDirectory { flag: &'static str, path: PathBuf },
    #[error("{flag} {} holds {SHARD_MARK} but no --shard is given", .path.display())]
    MarkWithoutShard { flag: &'static str, path: PathBuf },
    /// `--out` has `{shard}` and `--failures` has not: every shard would write one file.
    #[error(
        "--failures {} would be written by every shard: put {SHARD_MARK} in it as in --out, or \
         leave it out (each shard's failures go beside its output)",
        .0.display()
    )]
    SharedFailures(PathBuf),
}

/// Enlists this shard in its run (`run_files::manifest::enlist`), the manifest written first if no
/// shard has, with the count of every shard's keys among `keys` (all of the run's: done or not);
/// then leaves this shard's note beside its output. Refused when this shard is not that run.
///
/// Only a run split with `--shard` has a manifest: one process appending to its own output
/// keeps doing what it always did (an answers file that grows model by model, a judgments file
/// of several judges, a rerun with more re-asks).
pub fn enlist<'k, K: std::fmt::Display + 'k>(
    layout: &Layout,
    spec: &manifest::RunSpec,
    keys: impl Iterator<Item = &'k K>,
) -> anyhow::Result<Option<manifest::Manifest>> {
    if layout.shard.is_none() {
        return Ok(None);
    }
    let count = layout.shard.map_or(1, |s| s.count);
    let mut per_shard = vec![0u64; count as usize];
    for k in keys {
        let i = layout.shard.map_or(0, |s| Shard::index_of(k, s.count));
        per_shard[i as usize] += 1;
    }
    let in_file = match layout.shard {
        Some(s) if !has_mark(&layout.template) => Some(s.index),
        _ => None,
    };
    let mine = manifest::Manifest::of(spec, &layout.template, count, in_file, per_shard)?;
    let run = manifest::enlist(&layout.manifest, &mine)?;
    let note = ShardNote {
        run_id: run.run_id.clone(),
        shard: layout.shard.map(|s| s.to_string()),
        host: host_name(),
        pid: std::process::id(),
        started_unix_s: unix_now(),
    };
    let path = Layout::note(&layout.out);
    crate::input::write_atomically(&path, &serde_json::to_vec(&note)?)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(Some(run))
}

/// Whether a path's file name holds `{shard}`.
pub fn has_mark(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().contains(SHARD_MARK))
}

/// `template` with `{shard}` replaced by the shard's label. `{shard}` belongs in the file name
/// (the run's manifest sits beside every shard's output, in one directory).
fn render(
    template: &Path,
    shard: Option<Shard>,
    flag: &'static str,
) -> Result<PathBuf, LayoutError> {
    if !template.to_string_lossy().contains(SHARD_MARK) {
        return Ok(template.to_path_buf());
    }
    if !has_mark(template)
        || template
            .parent()
            .is_some_and(|d| d.to_string_lossy().contains(SHARD_MARK))
    {
        return Err(LayoutError::MarkInDirectory {
            flag,
            path: template.to_path_buf(),
        });
    }
    let Some(shard) = shard else {
        return Err(LayoutError::MarkWithoutShard {
            flag,
            path: template.to_path_buf(),
        });
    };
    let name = template
        .file_name()
        .map(|n| n.to_string_lossy().replace(SHARD_MARK, &shard.label()))
        .unwrap_or_default();
    Ok(template.with_file_name(name))
}

/// The run's manifest: `--out` without `{shard}` (and the separator before or after it), its
/// `.jsonl` cut, `.manifest` added: `runs/judge-{shard}.jsonl` → `runs/judge.manifest`. Not
/// `.json`, so that `score runs/` does not take it for results.
pub fn manifest_path(template: &Path) -> PathBuf {
    let name = template
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = match name.find(SHARD_MARK) {
        None => name,
        Some(at) => {
            let (before, after) = (&name[..at], &name[at + SHARD_MARK.len()..]);
            let sep = |c: char| matches!(c, '-' | '_' | '.');
            if before.ends_with(sep) {
                format!("{}{after}", &before[..before.len() - 1])
            } else if after.starts_with(['-', '_']) {
                format!("{before}{}", &after[1..])
            } else {
                format!("{before}{after}")
            }
        }
    };
    let stem = base.strip_suffix(".jsonl").unwrap_or(&base);
    let stem = if stem.is_empty() || stem.starts_with('.') {
        format!("run{stem}")
    } else {
        stem.to_string()
    };
    template.with_file_name(format!("{stem}.manifest"))
}

/// The note a shard leaves beside its output each time it starts: the run it belongs to (so a
/// shard's files are never mixed into another run by `merge`), where and when it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardNote {
    pub run_id: String,
    pub shard: Option<String>,
    pub host: String,
    pub pid: u32,
    pub started_unix_s: u64,
}

/// The machine's host name (for the notes; `?` when it cannot be read).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is ours and its length is given; gethostname writes at most that.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if ok {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "?".into()
    }
}

/// Seconds since 1970 (the notes' and the manifest's clock; a clock before 1970 reads 0).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_names_each_shard_and_one_manifest() {
        let s = Some(Shard {
            index: 3,
            count: 16,
        });
        let l = Layout::new(Path::new("runs/judge-{shard}.jsonl"), None, s).unwrap();
        assert_eq!(l.out, Path::new("runs/judge-0003-of-0016.jsonl"));
        assert_eq!(
            l.failures,
            Path::new("runs/judge-0003-of-0016.failures.ndjson")
        );
        assert_eq!(l.manifest, Path::new("runs/judge.manifest"));
        assert_eq!(
            manifest_path(Path::new("r/{shard}.jsonl")),
            Path::new("r/run.manifest")
        );
        assert_eq!(
            manifest_path(Path::new("r/{shard}-j.jsonl")),
            Path::new("r/j.manifest")
        );
        assert_eq!(
            manifest_path(Path::new("r/a.jsonl")),
            Path::new("r/a.manifest")
        );
        assert_eq!(
            manifest_path(Path::new("r/a.json")),
            Path::new("r/a.json.manifest")
        );
        assert_eq!(
            Layout::new(Path::new("a.jsonl"), None, s).unwrap().out,
            Path::new("a.jsonl")
        );
    }

    #[test]
    fn a_template_is_refused_where_it_cannot_work() {
        let s = Some(Shard { index: 0, count: 2 });
        let e = Layout::new(Path::new("runs/{shard}/j.jsonl"), None, s).unwrap_err();
        assert!(
            matches!(e, LayoutError::MarkInDirectory { flag: "--out", .. }),
            "{e}"
        );
        assert!(e.to_string().contains("file name"), "{e}");
        let e = Layout::new(Path::new("j-{shard}.jsonl"), None, None).unwrap_err();
        assert!(matches!(e, LayoutError::MarkWithoutShard { .. }), "{e}");
        let e =
            Layout::new(Path::new("j-{shard}.jsonl"), Some(Path::new("f.ndjson")), s).unwrap_err();
        assert_eq!(e, LayoutError::SharedFailures(PathBuf::from("f.ndjson")));
        assert!(e.to_string().contains("every shard"), "{e}");
        let l = Layout::new(
            Path::new("j-{shard}.jsonl"),
            Some(Path::new("f-{shard}.ndjson")),
            s,
        )
        .unwrap();
        assert_eq!(l.failures, Path::new("f-0000-of-0002.ndjson"));
    }
}
