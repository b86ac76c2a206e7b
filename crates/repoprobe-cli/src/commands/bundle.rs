//! `repoprobe bundle FILE... --out results.json`: one validated bundle from many files. Only
//! valid records go in, each with its unknown fields as written; the issues go to stderr. The
//! answers' trajectories (their `agent.transcript` files) go into one trajectories file beside
//! it, with its index (docs/format.md#trajectories-file).

use crate::exit::Exit;
use crate::input::{load_paths, print_issues, write_atomically};
use anyhow::Context;
use repoprobe_core::{BUNDLE_FORMAT, FORMAT_VERSION, LoadOptions};
use serde::Serialize;
use serde_json::value::RawValue;
use std::path::PathBuf;

#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    /// Files (JSON, JSONL, bundles) or directories of them.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// The bundle to write (one JSON file holding every record).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Where the answers' trajectories are gathered [default: <out without .json>.trajectories.jsonl,
    /// its index beside it as .trajectories.index.json].
    #[arg(long)]
    trajectories: Option<PathBuf>,
    /// Leave the trajectories out.
    #[arg(long, conflicts_with = "trajectories")]
    no_trajectories: bool,
}

#[derive(Serialize)]
struct Out<'a> {
    format: &'a str,
    version: u32,
    meta: serde_json::Value,
    benchmark: &'a [Box<RawValue>],
    answers: &'a [Box<RawValue>],
    judgments: &'a [Box<RawValue>],
    scalar_judgments: &'a [Box<RawValue>],
    failure_modes: &'a [Box<RawValue>],
    reported: &'a [Box<RawValue>],
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let loaded = load_paths(
        &a.files,
        LoadOptions {
            keep_raw: true,
            ..Default::default()
        },
    );
    print_issues(&loaded);
    let raw = loaded.dataset.raw.clone().unwrap_or_default();
    let sources: Vec<serde_json::Value> = loaded
        .files
        .iter()
        .map(|f| serde_json::json!({"file": f.name, "records": f.records, "meta": f.meta}))
        .collect();
    let out = Out {
        format: BUNDLE_FORMAT,
        version: FORMAT_VERSION,
        meta: serde_json::json!({"created_by": "repoprobe bundle", "sources": sources, "issues_left_out": loaded.issues.len()}),
        benchmark: &raw.questions,
        answers: &raw.answers,
        judgments: &raw.judgments,
        scalar_judgments: &raw.scalar_judgments,
        failure_modes: &raw.failure_labels,
        reported: &raw.reported,
    };
    let text = serde_json::to_vec(&out)?;
    write_atomically(&a.out, &text).with_context(|| format!("cannot write {}", a.out.display()))?;
    eprintln!(
        "wrote {}: {} questions, {} answers, {} judgments, {} scalar judgments, {} failure-mode labels, {} reported values",
        a.out.display(),
        raw.questions.len(),
        raw.answers.len(),
        raw.judgments.len(),
        raw.scalar_judgments.len(),
        raw.failure_labels.len(),
        raw.reported.len()
    );
    if !a.no_trajectories {
        let path = a
            .trajectories
            .clone()
            .unwrap_or_else(|| trajectories_beside(&a.out));
        gather_trajectories(&loaded, &a.files, &path)?;
    }
    Ok(Exit::of(&loaded))
}

/// `results.json` → `results.trajectories.jsonl`.
fn trajectories_beside(out: &std::path::Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    out.with_file_name(format!("{stem}.trajectories.jsonl"))
}

/// The ATIF trajectory at `rel`, read from the first of `dirs` that holds it; a record's path
/// stays under the directories given: never absolute, never `..`.
fn read_trajectory(
    dirs: &[PathBuf],
    rel: &str,
) -> Result<repoprobe_core::model::trajectory::Trajectory, TrajectoryError> {
    let rel = repoprobe_core::model::repo_path::normalise(rel).map_err(TrajectoryError::Path)?;
    let path = dirs
        .iter()
        .map(|d| d.join(&rel))
        .find(|p| p.is_file())
        .ok_or(TrajectoryError::NotFound)?;
    let bytes = crate::input::read(&path).map_err(TrajectoryError::Unreadable)?;
    serde_json::from_slice(&bytes).map_err(TrajectoryError::NotAtif)
}

/// Why an answer's trajectory (`agent.transcript`) is not bundled: said on stderr, never fatal.
#[derive(Debug, thiserror::Error)]
enum TrajectoryError {
    /// Its path is no path inside the run's directory (absolute, or with a `..` part).
    #[error("its path {0}")]
    Path(repoprobe_core::model::repo_path::PathProblem),
    /// In none of the input files' directories (bundle the run's directory with its files).
    #[error("not found beside the input files")]
    NotFound,
    #[error("{0}")]
    Unreadable(std::io::Error),
    #[error("not an ATIF trajectory: {0}")]
    NotAtif(serde_json::Error),
}

/// Writes the trajectory of every answer that names one (`agent.transcript`, read relative to
/// the directory of each input file in turn, first found) as a line of `path`, and the index
/// beside it (neither when there is none); an answer without a readable ATIF trajectory is said
/// on stderr, never fatal.
fn gather_trajectories(
    loaded: &repoprobe_core::Loaded,
    inputs: &[PathBuf],
    path: &std::path::Path,
) -> anyhow::Result<()> {
    use repoprobe_core::model::agent::AgentBlock;
    use repoprobe_core::trajectories::{self, Index, IndexEntry, TrajectoryKey};
    use std::io::Write;
    let dirs: Vec<PathBuf> = inputs
        .iter()
        .map(|p| {
            if p.is_dir() {
                p.clone()
            } else {
                p.parent().map(PathBuf::from).unwrap_or_default()
            }
        })
        .collect();
    let (mut entries, mut missing) = (Vec::new(), Vec::new());
    let written = crate::input::write_atomically_with(path, |w: &mut dyn Write| {
        let mut at = 0u64;
        for ans in &loaded.dataset.answers {
            let Some(rel) = AgentBlock::of(ans).and_then(|b| b.transcript.as_deref()) else {
                continue;
            };
            let key = TrajectoryKey {
                question_id: ans.question_id.clone(),
                model: ans.model.clone(),
                attempt: ans.attempt,
            };
            let read = read_trajectory(&dirs, rel);
            let t = match read {
                Ok(t) => t,
                Err(why) => {
                    missing.push(format!(
                        "{} / {} / attempt {} ({rel}): {why}",
                        key.question_id, key.model, key.attempt
                    ));
                    continue;
                }
            };
            let line = trajectories::line(&key, &t).map_err(std::io::Error::other)?;
            w.write_all(line.as_bytes())?;
            let length = line.len() as u64 - 1;
            entries.push(IndexEntry {
                key,
                offset: at,
                length,
            });
            at += line.len() as u64;
        }
        Ok(())
    });
    written.with_context(|| format!("cannot write {}", path.display()))?;
    for m in &missing {
        eprintln!(
            "warning: no trajectory for {}",
            repoprobe_core::text::terminal_safe(m)
        );
    }
    if entries.is_empty() {
        // Answers of another harness, or none named a trajectory: no file of nothing.
        let _ = crate::input::remove_file(path);
        return Ok(());
    }
    let bytes = crate::input::file_len(path).unwrap_or(0);
    // `x.trajectories.jsonl` → `x.trajectories.index.json`.
    let index_path = path.with_extension("index.json");
    let n = entries.len();
    let index = serde_json::to_vec(&Index::new(bytes, entries))?;
    write_atomically(&index_path, &index)
        .with_context(|| format!("cannot write {}", index_path.display()))?;
    eprintln!(
        "wrote {}: {n} trajectories ({} answers without one), indexed in {}",
        path.display(),
        missing.len(),
        index_path.display()
    );
    Ok(())
}
