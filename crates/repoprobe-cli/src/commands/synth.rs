//! `repoprobe synth`: a labelled synthetic results bundle for benchmarks and demos.

use crate::exit::Exit;
use crate::input::write_atomically;
use repoprobe_core::synth::{SynthOptions, generate};
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
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.questions == 0 || a.models == 0 {
        anyhow::bail!("--models and --questions must be at least 1");
    }
    let bundle = generate(SynthOptions {
        models: a.models,
        questions: a.questions,
        runs: a.runs,
        seed: a.seed,
    });
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
