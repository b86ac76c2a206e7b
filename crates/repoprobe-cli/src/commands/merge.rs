//! `repoprobe merge RUN... --out FILE.jsonl`: the records of a run's shards as one output, as
//! if one process had written them (each record's line as written, shard by shard). Refused,
//! with the shard and the reason, when a shard is incomplete (keys failed, left or never
//! started), when a key has two records, or when a shard's files or the runs named are not one
//! run (another run's note, other inputs or flags), unless told to take that as it is.

use crate::exit::Exit;
use crate::input::write_atomically;
use crate::run_files::kind::RecordKey;
use crate::run_files::state::{RunState, ShardState, manifests, read_run};
use anyhow::{Context, bail};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run's manifest (`*.manifest`), a directory holding one run, or a shard's output.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// The merged output (JSONL).
    #[arg(long)]
    out: PathBuf,
    /// Merge even if a shard has keys failed, left or not started (they are missing from --out).
    #[arg(long)]
    allow_incomplete: bool,
    /// Keep the first record of a key given twice instead of refusing.
    #[arg(long)]
    allow_duplicates: bool,
    /// Merge runs whose manifests differ (another command, inputs or flags), and shards whose
    /// note names another run.
    #[arg(long)]
    allow_mixed_runs: bool,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let mut paths = Vec::new();
    for p in &a.runs {
        paths.extend(manifests(p)?);
    }
    paths.sort();
    paths.dedup();
    let runs = paths
        .iter()
        .map(|p| read_run(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut refusals = mixed_runs(&runs, a.allow_mixed_runs);
    let mut joined = Joined::default();
    for r in &runs {
        for s in &r.shards {
            joined.shard(r, s, &a, &mut refusals);
        }
    }
    if !refusals.is_empty() {
        bail!(
            "not merged; {}:\n  - {}",
            if refusals.len() == 1 {
                "one reason".to_string()
            } else {
                format!("{} reasons", refusals.len())
            },
            refusals.join("\n  - ")
        );
    }
    let Joined {
        lines,
        excluded,
        duplicates,
        missing,
        ..
    } = joined;
    write_lines(&a.out, &lines)?;
    // A `curate` stage's drops go beside the merged output, as one process would have left them.
    if !excluded.is_empty() {
        let path = crate::output::beside(&a.out, "excluded.ndjson");
        write_lines(&path, &excluded)?;
        eprintln!(
            "merge: wrote {} excluded record(s) to {}",
            excluded.len(),
            path.display()
        );
    }
    eprintln!(
        "merge: wrote {} record(s) of {} run(s) to {}{}{}",
        lines.len(),
        runs.len(),
        a.out.display(),
        if missing > 0 {
            format!("; {missing} key(s) missing")
        } else {
            String::new()
        },
        if duplicates > 0 {
            format!("; {duplicates} duplicate(s) left out")
        } else {
            String::new()
        },
    );
    Ok(if missing > 0 || duplicates > 0 {
        Exit::InvalidRecords
    } else {
        Exit::Ok
    })
}

/// Why the runs are not one run: their manifests differ (but in `--out` and the shards).
fn mixed_runs(runs: &[RunState], allow: bool) -> Vec<String> {
    let mut refusals = Vec::new();
    let first = &runs[0];
    for r in &runs[1..] {
        let mut d = first.manifest.differences(&r.manifest);
        d.retain(|x| !x.starts_with("--out") && !x.starts_with("the shards"));
        if !d.is_empty() && !allow {
            refusals.push(format!(
                "{} and {} are not the same run: {} (--allow-mixed-runs to merge them anyway)",
                first.manifest_path.display(),
                r.manifest_path.display(),
                d.join("; ")
            ));
        }
    }
    refusals
}

/// The shards' records joined, each key once (the first), and what was short or twice.
#[derive(Default)]
struct Joined<'r> {
    seen: HashSet<RecordKey>,
    lines: Vec<&'r str>,
    excluded: Vec<&'r str>,
    duplicates: u64,
    missing: u64,
}

impl<'r> Joined<'r> {
    /// Takes a shard's records and excluded records; says in `refusals` why it cannot be merged
    /// (another run's, incomplete, duplicated), unless a flag allows it.
    fn shard(&mut self, r: &RunState, s: &'r ShardState, a: &Args, refusals: &mut Vec<String>) {
        let name = s
            .shard
            .map_or_else(|| "the run".to_string(), |x| format!("shard {}", x.label()));
        let at = format!(
            "{} ({name}, {})",
            r.manifest_path.display(),
            s.out.display()
        );
        if s.foreign(&r.manifest) && !a.allow_mixed_runs {
            refusals.push(format!(
                "{at}: written by another run than this manifest's (--allow-mixed-runs to take it)"
            ));
        }
        let short = s.keys.saturating_sub(s.done);
        if (short > 0 || s.failed > 0) && !a.allow_incomplete {
            refusals.push(format!(
                "{at}: incomplete, {} of {} done, {} failed, {} left (--allow-incomplete to merge what is there)",
                s.done,
                s.keys,
                s.failed,
                s.left()
            ));
        }
        self.missing += short;
        if s.duplicates > 0 && !a.allow_duplicates {
            refusals.push(format!(
                "{at}: {} key(s) with two records (--allow-duplicates keeps the first)",
                s.duplicates
            ));
        }
        self.duplicates += s.duplicates;
        for (id, line) in &s.excluded {
            if self.seen.insert(id.clone()) {
                self.excluded.push(line.as_str());
            } else {
                self.duplicates += 1;
            }
        }
        for (id, line) in &s.records {
            if self.seen.insert(id.clone()) {
                self.lines.push(line.as_str());
            } else {
                self.duplicates += 1;
                if !a.allow_duplicates {
                    refusals.push(format!(
                        "{at}: the key {} has a record in another shard too (--allow-duplicates keeps the first)",
                        repoprobe_core::text::terminal_safe(&id.to_string())
                    ));
                }
            }
        }
    }
}

/// Writes `lines`, each ended by a newline, atomically.
fn write_lines(path: &Path, lines: &[&str]) -> anyhow::Result<()> {
    let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    write_atomically(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_files::kind::RunKind;
    use crate::run_files::manifest::RunSpec;
    use crate::run_files::{Layout, enlist};
    use crate::shard::Shard;

    /// A `curate themes` run (whose records no command name matched before its kind read them)
    /// merges whole: each repository once, in shard order.
    #[test]
    fn the_shards_of_a_curate_themes_run_merge_into_one_output() {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("themed-{shard}.jsonl");
        let repos: Vec<String> = (0..8).map(|i| format!("acme/lib{i}")).collect();
        let mut manifest = None;
        for index in 0..2 {
            let l = Layout::new(&template, None, Some(Shard { index, count: 2 })).unwrap();
            enlist(&l, &RunSpec::new(RunKind::CurateThemes), repos.iter()).unwrap();
            let lines: Vec<String> = repos
                .iter()
                .filter(|r| Shard { index, count: 2 }.owns(r))
                .map(|r| format!(r#"{{"repo":"{r}","theme":"Security"}}"#))
                .collect();
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            write_lines(&l.out, &lines).unwrap();
            manifest = Some(l.manifest);
        }
        let out = dir.path().join("themed.jsonl");
        let a = Args {
            runs: vec![manifest.unwrap()],
            out: out.clone(),
            allow_incomplete: false,
            allow_duplicates: false,
            allow_mixed_runs: false,
        };
        assert_eq!(run(a).unwrap(), Exit::Ok);
        let merged = std::fs::read_to_string(&out).unwrap();
        let mut got: Vec<&str> = merged.lines().collect();
        got.sort_unstable();
        let want: Vec<String> = repos
            .iter()
            .map(|r| format!(r#"{{"repo":"{r}","theme":"Security"}}"#))
            .collect();
        assert_eq!(got, want);
    }
}
