//! `repoprobe judge-agreement FILE...`: how far judges agree on the checklist items they both scored —
//! a model against people (`human:NAME`), against another model, or against itself with the
//! items shuffled (docs/metrics.md#agreement-between-judges). Every figure is the core's.

use super::score::ClusterFlag;
use crate::exit::Exit;
use crate::input::{load_paths, print_issues};
use repoprobe_core::LoadOptions;
use repoprobe_core::metrics::judges::{JudgesOptions, judges};
use repoprobe_core::report;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Characters of a rationale the terminal table shows (JSON holds them whole).
const RATIONALE_CHARS: usize = 60;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files (JSON, JSONL, bundles) or directories of them: the benchmark and the judgments of
    /// the judges to compare.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Judge A of every pair (default: every judge).
    #[arg(long, value_name = "JUDGE")]
    a: Option<String>,
    /// Judge B of every pair, the reference of the full-credit F1 (default: every judge; people,
    /// `human:NAME`, are B against a model).
    #[arg(long, value_name = "JUDGE")]
    b: Option<String>,
    /// How to print the agreement: table (the terminal), json, csv or markdown.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Bootstrap resamples for the 95% intervals of κ, α, F1 and the bias (0 turns them off).
    #[arg(long, default_value_t = 1000)]
    bootstrap: u32,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 0)]
    bootstrap_seed: u64,
    /// What the bootstrap resamples whole: the questions of a repository together, each
    /// question alone, or each answer alone (docs/metrics.md#agreement-between-judges).
    #[arg(long, value_enum, default_value = "repo")]
    cluster: ClusterFlag,
    /// Disagreements listed per pair in the terminal table (JSON lists every one).
    #[arg(long, default_value_t = 10, value_name = "N")]
    disagreements: usize,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    #[value(alias = "table")]
    Table,
    Json,
    Csv,
    Markdown,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    // Rationales are shown: keep the texts.
    let loaded = load_paths(&a.files, LoadOptions::default());
    print_issues(&loaded);
    if loaded.dataset.questions.is_empty() {
        anyhow::bail!(
            "no valid benchmark questions were loaded: give the benchmark file (or a bundle with one); \
             a judgment's items are weighed by its question's checklist"
        );
    }
    let opts = JudgesOptions {
        a: a.a.clone(),
        b: a.b.clone(),
        bootstrap: a.bootstrap,
        seed: a.bootstrap_seed,
        cluster: a.cluster.into(),
    };
    let r = judges(&loaded.dataset, &opts)?;
    if r.pairs.is_empty() {
        eprintln!(
            "note: {} judge(s) in the files: agreement needs two",
            r.judges.len()
        );
    }
    for p in r.pairs.iter().filter(|p| p.overall.items == 0) {
        eprintln!(
            "note: judges {} and {} scored no item of the same answer",
            repoprobe_core::text::terminal_safe(&format!("{:?}", p.a)),
            repoprobe_core::text::terminal_safe(&format!("{:?}", p.b)),
        );
    }
    let cut = |s: &str| repoprobe_core::text::cut(&s.replace(['\n', '\r'], " "), RATIONALE_CHARS);
    let tables = || report::judges_tables(&r, a.disagreements, &cut);
    let out = match a.format {
        Format::Json => serde_json::to_string_pretty(&r)? + "\n",
        Format::Csv => report::judges_csv(&r),
        Format::Table => {
            let ansi = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            join(tables().iter().map(|t| report::render_text(t, ansi)))
        }
        Format::Markdown => join(tables().iter().map(report::render_markdown)),
    };
    crate::stdout::write(out.as_bytes())?;
    Ok(Exit::Ok)
}

fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join("\n")
}
