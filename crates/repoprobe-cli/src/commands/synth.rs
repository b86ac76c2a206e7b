//! `repoprobe synth`: a labelled synthetic results bundle for benchmarks and demos.

use crate::exit::Exit;
use crate::input::write_atomically;
use anyhow::Context;
use repoprobe_core::model::trajectory::Trajectory;
use repoprobe_core::synth::{SynthOptions, generate, generate_with_runs};
use repoprobe_core::trajectories::{self, TrajectoryKey};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 20)]
    models: u32,
    #[arg(long, default_value_t = 500)]
    questions: u32,
    /// Judge runs per answer.
    #[arg(long, default_value_t = 1)]
    runs: u32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output file (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also give every answer a synthetic run: write the trajectories to FILE (name it
    /// `*.trajectories.jsonl`; its index goes beside it as `*.trajectories.index.json`), the
    /// knowledge items evidence paths, and each answer the facts of its run (files read, tool
    /// calls, turns) and a cost. The rest of the bundle is as without it.
    #[arg(long, value_name = "FILE")]
    trajectories: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.questions == 0 || a.models == 0 {
        anyhow::bail!("--models and --questions must be at least 1");
    }
    let o = SynthOptions {
        models: a.models,
        questions: a.questions,
        runs: a.runs,
        seed: a.seed,
    };
    let bundle = match &a.trajectories {
        None => generate(o),
        Some(path) => {
            let (bundle, runs) = generate_with_runs(o);
            write_trajectories(path, &runs)?;
            bundle
        }
    };
    let text = serde_json::to_vec(&bundle)?;
    match a.out {
        Some(path) => {
            write_atomically(&path, &text)?;
            eprintln!(
                "wrote {} (SYNTHETIC): {} questions, {} answers, {} judgments, {} bytes",
                path.display(),
                bundle.benchmark.len(),
                bundle.answers.len(),
                bundle.judgments.len(),
                text.len()
            );
        }
        None => {
            crate::stdout::write(&text)?;
            crate::stdout::write(b"\n")?;
        }
    }
    Ok(Exit::Ok)
}

/// The runs' file and its index beside it (`x.trajectories.jsonl` → `x.trajectories.index.json`).
fn write_trajectories(
    path: &std::path::Path,
    runs: &[(TrajectoryKey, Trajectory)],
) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !name.ends_with(".trajectories.jsonl") {
        anyhow::bail!(
            "--trajectories {}: name it *.trajectories.jsonl, the name the site and `bundle` read trajectories by",
            path.display()
        );
    }
    let (bytes, index) = trajectories::file(runs)?;
    write_atomically(path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    let index_path = path.with_extension("index.json");
    write_atomically(&index_path, &serde_json::to_vec(&index)?)
        .with_context(|| format!("cannot write {}", index_path.display()))?;
    eprintln!(
        "wrote {} (SYNTHETIC): {} runs, {} bytes, indexed in {}",
        path.display(),
        runs.len(),
        bytes.len(),
        index_path.display()
    );
    Ok(())
}
