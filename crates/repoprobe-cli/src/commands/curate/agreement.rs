//! `repoprobe curate agreement REVIEWS...`: how far the reviewers of the candidates agree, per
//! criterion and for the decision (percent agreement, Cohen's κ, Krippendorff's α), and the
//! questions they disagree on (docs/review.md#agreement). The figures are the core's
//! (`repoprobe_curate::agreement`); this only loads the files and prints.

use crate::exit::Exit;
use crate::input::{load_paths, print_issues};
use repoprobe_core::LoadOptions;
use repoprobe_curate::agreement::{Agreement, agreement};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Review files (`reviews.jsonl`, docs/format.md#review) or directories of them.
    #[arg(required = true)]
    reviews: Vec<PathBuf>,
    /// `text`: a small table; `json`: the figures (`null` where undefined).
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

/// Loads the review files (every bad record reported on stderr) and their agreement.
pub(super) fn load(paths: &[PathBuf]) -> anyhow::Result<(Agreement, Exit)> {
    let loaded = load_paths(paths, LoadOptions::default());
    print_issues(&loaded);
    let exit = Exit::of(&loaded);
    if loaded.dataset.reviews.is_empty() {
        anyhow::bail!(
            "no valid review records were loaded from {} (docs/format.md#review)",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok((agreement(&loaded.dataset.reviews), exit))
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let (agreement, exit) = load(&a.reviews)?;
    let out = match a.format {
        Format::Json => serde_json::to_string_pretty(&agreement)? + "\n",
        // Reviewer names and question ids are made terminal-safe by the renderer.
        Format::Table => repoprobe_core::report::render_text(
            &repoprobe_curate::agreement_table(&agreement),
            false,
        ),
    };
    crate::stdout::write(out.as_bytes())?;
    Ok(exit)
}
