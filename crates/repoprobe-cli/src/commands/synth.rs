//! `repoprobe synth`: a labelled synthetic results bundle for benchmarks and demos.

use crate::exit::Exit;
use crate::input::write_atomically;
use anyhow::Context;
use repoprobe_core::model::trajectory::Trajectory;
use repoprobe_core::synth::{Design, SynthOptions, generate_designed, generate_with_runs};
use repoprobe_core::trajectories::{self, TrajectoryKey};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Models under test (`synth-model-01` …), each answering every question.
    #[arg(long, default_value_t = 20)]
    models: u32,
    /// Questions in the benchmark (`synth-q-0001` …).
    #[arg(long, default_value_t = 500)]
    questions: u32,
    /// Judge runs per answer.
    #[arg(long, default_value_t = 1)]
    runs: u32,
    /// The seed of the synthetic data: the same seed and flags give the same bundle.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Questions per repository: consecutive questions share a repository (name, url, commit,
    /// language, theme) in groups of N, and its difficulty, which moves every model's scores on
    /// them together (what `score --cluster repo` accounts for).
    #[arg(long, value_name = "N", default_value_t = 10)]
    questions_per_repo: u32,
    /// Model judges: `synth-judge` (every judge run), then `synth-judge-2`, … (run 0 of every
    /// answer, correlated with the first but not identical), for the Judges view.
    #[arg(long, value_name = "N", default_value_t = 1)]
    judges: u32,
    /// Also grade N answers of each model as a synthetic person, judge `human:synthetic-grader`
    /// (as the Grade view writes a person's grades): SYNTHETIC, no person graded them.
    #[arg(long, value_name = "N", default_value_t = 0)]
    human_grades: u32,
    /// Attempts of every model at every question (`attempt` 0..N), each answered and judged.
    #[arg(long, value_name = "N", default_value_t = 1)]
    attempts: u32,
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
    if a.questions_per_repo == 0 || a.judges == 0 || a.attempts == 0 {
        anyhow::bail!("--questions-per-repo, --judges and --attempts must be at least 1");
    }
    let d = Design {
        questions_per_repo: a.questions_per_repo,
        judges: a.judges,
        human_grades: a.human_grades,
        attempts: a.attempts,
    };
    let o = SynthOptions {
        models: a.models,
        questions: a.questions,
        runs: a.runs,
        seed: a.seed,
    };
    let bundle = match &a.trajectories {
        None => generate_designed(o, d),
        Some(path) => {
            let (bundle, runs) = generate_with_runs(o, d);
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
